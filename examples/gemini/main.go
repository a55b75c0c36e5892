// Command gemini runs an agent loop with the Gemini API (generateContent)
// over the tools of an MCP server (the mcpadapter/gemini binding). By
// default it talks to a scripted fake of the API on loopback, so it runs
// with no network and no key; -real uses the Gemini API with
// GEMINI_API_KEY.
//
//	go run ./gemini
//	GEMINI_API_KEY=... go run ./gemini -real -model gemini-2.5-flash
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/examples/internal/demotools"
	"github.com/mcpadapter/mcpadapter/examples/internal/fakeprovider"
	"github.com/mcpadapter/mcpadapter/gemini"
	"google.golang.org/genai"
)

func main() {
	useReal := flag.Bool("real", false, "use the real API (key from GEMINI_API_KEY) instead of the loopback fake")
	model := flag.String("model", "gemini-2.5-flash", "model")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, *useReal, *model); err != nil {
		fmt.Fprintln(os.Stderr, "gemini:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, useReal bool, model string) (err error) {
	cfg := &genai.ClientConfig{APIKey: os.Getenv("GEMINI_API_KEY"), Backend: genai.BackendGeminiAPI}
	if !useReal {
		fake := fakeprovider.Gemini(demotools.Script())
		defer func() { fake.Close(); err = errors.Join(err, fake.Err()) }()
		cfg.APIKey, cfg.HTTPOptions.BaseURL = "fake-key", fake.URL
	} else if cfg.APIKey == "" {
		return errors.New("-real needs GEMINI_API_KEY")
	}
	a, err := mcpadapter.New(demotools.NewServer(), nil)
	if err != nil {
		return err
	}
	defer a.Close()
	tools, err := a.Tools(ctx)
	if err != nil {
		return err
	}
	ts, err := gemini.New(tools, nil)
	if err != nil {
		return err
	}
	client, err := genai.NewClient(ctx, cfg)
	if err != nil {
		return err
	}
	config := &genai.GenerateContentConfig{Tools: []*genai.Tool{ts.Tool()}}
	contents := []*genai.Content{genai.NewContentFromText(demotools.Question, genai.RoleUser)}
	fmt.Fprintf(w, "user: %s\n", demotools.Question)
	for range demotools.MaxTurns {
		resp, err := client.Models.GenerateContent(ctx, model, contents, config)
		if err != nil {
			return err
		}
		calls := gemini.Calls(resp)
		if len(calls) == 0 {
			fmt.Fprintf(w, "assistant: %s\n", resp.Text())
			return nil
		}
		for _, c := range calls {
			args, _ := json.Marshal(c.Args)
			fmt.Fprintf(w, "assistant calls %s %s [%s]\n", c.Name, args, c.ID)
		}
		outs, err := ts.Run(ctx, calls)
		if err != nil {
			return err
		}
		for _, o := range outs {
			if o.Pending != nil {
				return fmt.Errorf("tool %s asks the user something; this example has no one to ask", o.Call.Name)
			}
			resp, _ := json.Marshal(o.FunctionResponse().Response)
			fmt.Fprintf(w, "tool %s [%s]: %s\n", o.Call.Name, o.Call.ID, resp)
		}
		contents = append(contents, resp.Candidates[0].Content, gemini.UserContent(outs))
	}
	return fmt.Errorf("no final answer after %d turns", demotools.MaxTurns)
}

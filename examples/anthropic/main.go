// Command anthropic runs an agent loop with the Anthropic Messages API
// over the tools of an MCP server (the mcpadapter/anthropic binding). By
// default it talks to a scripted fake of the API on loopback, so it runs
// with no network and no key; -real uses api.anthropic.com with
// ANTHROPIC_API_KEY.
//
//	go run ./anthropic
//	ANTHROPIC_API_KEY=... go run ./anthropic -real -model claude-sonnet-4-5
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/anthropic"
	"github.com/mcpadapter/mcpadapter/examples/internal/demotools"
	"github.com/mcpadapter/mcpadapter/examples/internal/fakeprovider"
)

func main() {
	useReal := flag.Bool("real", false, "use the real API (key from ANTHROPIC_API_KEY) instead of the loopback fake")
	model := flag.String("model", "claude-sonnet-4-5", "model")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, *useReal, *model); err != nil {
		fmt.Fprintln(os.Stderr, "anthropic:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, useReal bool, model string) (err error) {
	opts := []option.RequestOption{option.WithAPIKey(os.Getenv("ANTHROPIC_API_KEY"))}
	if !useReal {
		fake := fakeprovider.Anthropic(demotools.Script())
		defer func() { fake.Close(); err = errors.Join(err, fake.Err()) }()
		opts = []option.RequestOption{option.WithAPIKey("fake-key"), option.WithBaseURL(fake.URL)}
	} else if os.Getenv("ANTHROPIC_API_KEY") == "" {
		return errors.New("-real needs ANTHROPIC_API_KEY")
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
	ts, err := anthropic.New(tools, nil)
	if err != nil {
		return err
	}
	client := ant.NewClient(opts...)
	params := ant.MessageNewParams{
		Model:     ant.Model(model),
		MaxTokens: 1024,
		Messages:  []ant.MessageParam{ant.NewUserMessage(ant.NewTextBlock(demotools.Question))},
		Tools:     ts.Tools(),
	}
	fmt.Fprintf(w, "user: %s\n", demotools.Question)
	for range demotools.MaxTurns {
		msg, err := client.Messages.New(ctx, params)
		if err != nil {
			return err
		}
		var text []string
		for _, b := range msg.Content {
			if b.Type == "text" {
				text = append(text, b.Text)
			}
		}
		calls := anthropic.Calls(msg)
		if len(calls) == 0 {
			fmt.Fprintf(w, "assistant: %s\n", strings.Join(text, "\n"))
			return nil
		}
		if len(text) > 0 {
			fmt.Fprintf(w, "assistant: %s\n", strings.Join(text, "\n"))
		}
		for _, c := range calls {
			fmt.Fprintf(w, "assistant calls %s %s [%s]\n", c.Name, c.Input, c.ID)
		}
		outs, err := ts.Run(ctx, calls)
		if err != nil {
			return err
		}
		for _, o := range outs {
			if o.Pending != nil {
				return fmt.Errorf("tool %s asks the user something; this example has no one to ask", o.Call.Name)
			}
			fmt.Fprintf(w, "tool %s [%s] is_error=%t: %s\n", o.Call.Name, o.Call.ID, o.IsError(), o.Text())
		}
		params.Messages = append(params.Messages, msg.ToParam(), anthropic.UserMessage(outs))
	}
	return fmt.Errorf("no final answer after %d turns", demotools.MaxTurns)
}

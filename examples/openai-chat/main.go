// Command openai-chat runs an agent loop with OpenAI Chat Completions
// over the tools of an MCP server (the mcpadapter/openai binding). By
// default it talks to a scripted fake of the API on loopback, so it runs
// with no network and no key; -real uses api.openai.com with
// OPENAI_API_KEY.
//
//	go run ./openai-chat
//	OPENAI_API_KEY=... go run ./openai-chat -real -model gpt-4.1-mini
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/examples/internal/demotools"
	"github.com/mcpadapter/mcpadapter/examples/internal/fakeprovider"
	"github.com/mcpadapter/mcpadapter/openai"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

func main() {
	useReal := flag.Bool("real", false, "use the real API (key from OPENAI_API_KEY) instead of the loopback fake")
	model := flag.String("model", "gpt-4.1-mini", "model")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, *useReal, *model); err != nil {
		fmt.Fprintln(os.Stderr, "openai-chat:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, useReal bool, model string) (err error) {
	opts := []option.RequestOption{option.WithAPIKey(os.Getenv("OPENAI_API_KEY"))}
	if !useReal {
		fake := fakeprovider.OpenAIChat(demotools.Script())
		defer func() { fake.Close(); err = errors.Join(err, fake.Err()) }()
		opts = []option.RequestOption{option.WithAPIKey("fake-key"), option.WithBaseURL(fake.URL + "/v1")}
	} else if os.Getenv("OPENAI_API_KEY") == "" {
		return errors.New("-real needs OPENAI_API_KEY")
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
	ts, err := openai.New(tools, nil)
	if err != nil {
		return err
	}
	client := oai.NewClient(opts...)
	params := oai.ChatCompletionNewParams{
		Model:    model,
		Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage(demotools.Question)},
		Tools:    ts.ChatTools(),
	}
	fmt.Fprintf(w, "user: %s\n", demotools.Question)
	for range demotools.MaxTurns {
		resp, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			return err
		}
		if len(resp.Choices) == 0 {
			return errors.New("the model sent no choice")
		}
		msg := resp.Choices[0].Message
		calls := openai.ChatCalls(msg)
		if len(calls) == 0 {
			fmt.Fprintf(w, "assistant: %s\n", msg.Content)
			return nil
		}
		params.Messages = append(params.Messages, msg.ToParam())
		for _, c := range calls {
			fmt.Fprintf(w, "assistant calls %s %s [%s]\n", c.Name, c.Arguments, c.ID)
		}
		outs, err := ts.Run(ctx, calls)
		if err != nil {
			return err
		}
		for _, o := range outs {
			if o.Pending != nil {
				return fmt.Errorf("tool %s asks the user something; this example has no one to ask", o.Call.Name)
			}
			fmt.Fprintf(w, "tool %s [%s]: %s\n", o.Call.Name, o.Call.ID, o.Text())
			params.Messages = append(params.Messages, o.ChatMessage())
		}
	}
	return fmt.Errorf("no final answer after %d turns", demotools.MaxTurns)
}

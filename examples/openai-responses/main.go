// Command openai-responses runs an agent loop with the OpenAI Responses
// API over the tools of an MCP server (the mcpadapter/openai binding).
// By default it talks to a scripted fake of the API on loopback, so it
// runs with no network and no key; -real uses api.openai.com with
// OPENAI_API_KEY.
//
//	go run ./openai-responses
//	OPENAI_API_KEY=... go run ./openai-responses -real -model gpt-4.1-mini
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
	"github.com/openai/openai-go/v3/responses"
)

func main() {
	useReal := flag.Bool("real", false, "use the real API (key from OPENAI_API_KEY) instead of the loopback fake")
	model := flag.String("model", "gpt-4.1-mini", "model")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, *useReal, *model); err != nil {
		fmt.Fprintln(os.Stderr, "openai-responses:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, useReal bool, model string) (err error) {
	opts := []option.RequestOption{option.WithAPIKey(os.Getenv("OPENAI_API_KEY"))}
	if !useReal {
		fake := fakeprovider.OpenAIResponses(demotools.Script())
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
	input := responses.ResponseInputParam{
		responses.ResponseInputItemParamOfMessage(demotools.Question, responses.EasyInputMessageRoleUser),
	}
	fmt.Fprintf(w, "user: %s\n", demotools.Question)
	for range demotools.MaxTurns {
		resp, err := client.Responses.New(ctx, responses.ResponseNewParams{
			Model: model,
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input},
			Tools: ts.ResponseTools(),
		})
		if err != nil {
			return err
		}
		calls := openai.ResponseCalls(resp)
		if len(calls) == 0 {
			fmt.Fprintf(w, "assistant: %s\n", resp.OutputText())
			return nil
		}
		for _, c := range calls {
			fmt.Fprintf(w, "assistant calls %s %s [%s]\n", c.Name, c.Arguments, c.ID)
			input = append(input, responses.ResponseInputItemParamOfFunctionCall(c.Arguments, c.ID, c.Name))
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
			input = append(input, o.ResponseItem())
		}
	}
	return fmt.Errorf("no final answer after %d turns", demotools.MaxTurns)
}

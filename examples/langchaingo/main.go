// Command langchaingo is an agent loop on github.com/tmc/langchaingo with
// the tools of an MCP server (internal/tripserver, run in this
// process): the model's tool calls of each turn run in parallel through
// mcpadapter/langchaingo, a tool error goes back to the model as text,
// and the server's question (elicitation) is answered by the user, here
// the -guests flag, before the call resumes.
//
//	go run ./langchaingo                   # a scripted llms.Model, no network
//	OPENAI_API_KEY=... go run ./langchaingo -real [-model gpt-4o-mini]
//
// It prints the transcript.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/tripserver"
	lc "github.com/mcpadapter/mcpadapter/langchaingo"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
)

// Prompt is the user's request.
const Prompt = "Plan Friday: the weather in Paris and in Berlin, and a table for us at Chez Marie."

// maxTurns bounds the model turns of one run.
const maxTurns = 8

func main() {
	real := flag.Bool("real", false, "use OpenAI through langchaingo's openai package (key from OPENAI_API_KEY)")
	modelName := flag.String("model", "gpt-4o-mini", "the OpenAI model with -real")
	guests := flag.Int("guests", 2, "the user's answer to the server's question")
	flag.Parse()
	var model llms.Model = Scripted{}
	if *real {
		if os.Getenv("OPENAI_API_KEY") == "" {
			log.Fatal("-real needs OPENAI_API_KEY")
		}
		m, err := openai.New(openai.WithModel(*modelName))
		if err != nil {
			log.Fatal(err)
		}
		model = m
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := Run(ctx, os.Stdout, model, Prompt, *guests); err != nil {
		log.Fatal(err)
	}
}

// Run runs the agent loop against model and writes the transcript to w;
// guests is the user's answer to the server's question.
func Run(ctx context.Context, w io.Writer, model llms.Model, prompt string, guests int) error {
	a, err := mcpadapter.New(tripserver.New(), &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
	if err != nil {
		return err
	}
	defer a.Close()
	tools, err := a.Tools(ctx)
	if err != nil {
		return err
	}
	ts, err := lc.New(tools, nil)
	if err != nil {
		return err
	}
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, prompt)}
	fmt.Fprintf(w, "user: %s\n", prompt)
	for range maxTurns {
		resp, err := model.GenerateContent(ctx, msgs, llms.WithTools(ts.Definitions()))
		if err != nil {
			return fmt.Errorf("model: %w", err)
		}
		if len(resp.Choices) == 0 {
			return errors.New("model: no choice")
		}
		choice := resp.Choices[0]
		if len(choice.ToolCalls) == 0 {
			fmt.Fprintf(w, "model: %s\n", choice.Content)
			return nil
		}
		msgs = append(msgs, lc.AssistantMessage(choice))
		for _, c := range choice.ToolCalls {
			fmt.Fprintf(w, "model calls %s %s\n", c.FunctionCall.Name, c.FunctionCall.Arguments)
		}
		outs, err := ts.Run(ctx, choice.ToolCalls)
		if err != nil {
			return err // a transport failure: the model cannot fix it
		}
		for _, o := range outs {
			for o.Pending != nil {
				if o, err = answer(ctx, w, ts, o, guests); err != nil {
					return err
				}
			}
			fmt.Fprintf(w, "tool %s: %s\n", o.Call.FunctionCall.Name, o.Text())
			if o.Result.Artifact != nil && !o.Result.IsError {
				fmt.Fprintf(w, "  (structured content for the application: %s)\n", o.Result.Artifact.StructuredContent)
			}
			msgs = append(msgs, o.Message())
		}
	}
	return fmt.Errorf("no answer after %d model turns", maxTurns)
}

// answer asks the user the server's questions (here: answers them with
// guests) and resumes the call.
func answer(ctx context.Context, w io.Writer, ts *lc.Toolset, o lc.Outcome, guests int) (lc.Outcome, error) {
	res := &elicitation.Resume{Responses: map[string]elicitation.Response{}}
	for _, r := range o.Pending.Requests {
		fmt.Fprintf(w, "server asks the user (%s): %s\n", o.Pending.ModelTool, r.Message)
		res.Responses[r.Key] = elicitation.Response{Action: elicitation.Accept, Content: map[string]any{"guests": guests}}
		b, _ := json.Marshal(res.Responses[r.Key].Content)
		fmt.Fprintf(w, "user answers: %s\n", b)
	}
	return ts.Resume(ctx, o, res)
}

// Scripted is a chat model that plans the trip without a network: on the
// user's turn it calls the tools, all at once; once they answered, it
// sums up what they said.
type Scripted struct{}

// GenerateContent implements llms.Model.
func (Scripted) GenerateContent(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	last := msgs[len(msgs)-1]
	if last.Role != llms.ChatMessageTypeTool {
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{ToolCalls: []llms.ToolCall{
			call("call_1", "forecast", `{"city":"Paris"}`),
			call("call_2", "forecast", `{"city":"Berlin"}`),
			call("call_3", "book_table", `{"restaurant":"Chez Marie","date":"Friday"}`),
		}}}}, nil
	}
	var said []string
	for _, m := range msgs {
		for _, p := range m.Parts {
			if r, ok := p.(llms.ToolCallResponse); ok {
				said = append(said, r.Content)
			}
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{
		Content: "Here is Friday. " + strings.Join(said, " ")}}}, nil
}

// Call implements llms.Model.
func (s Scripted) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, s, prompt, options...)
}

func call(id, name, args string) llms.ToolCall {
	return llms.ToolCall{ID: id, Type: "function", FunctionCall: &llms.FunctionCall{Name: name, Arguments: args}}
}

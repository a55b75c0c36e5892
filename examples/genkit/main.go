// Command genkit is an agent on Firebase Genkit for Go with the tools of
// an MCP server (internal/tripserver, run in this process):
// Genkit runs the model's tool requests of each turn in parallel through
// mcpadapter/genkit, a tool error goes back to the model as the tool's
// output, and the server's question (elicitation) is a Genkit tool
// interrupt that the user answers, here the -guests flag, before the
// tool restarts.
//
//	go run ./genkit                      # a scripted model (genkit.DefineModel), no network
//	GEMINI_API_KEY=... go run ./genkit -real [-model gemini-2.5-flash]
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
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/firebase/genkit/go/ai"
	gk "github.com/firebase/genkit/go/genkit"
	"github.com/firebase/genkit/go/plugins/googlegenai"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	mg "github.com/mcpadapter/mcpadapter/genkit"
	"github.com/mcpadapter/mcpadapter/internal/tripserver"
)

// Prompt is the user's request.
const Prompt = "Plan Friday: the weather in Paris and in Berlin, and a table for us at Chez Marie."

// maxRestarts bounds the interrupts of one run, and the questions of one
// tool call.
const maxRestarts = 4

func main() {
	real := flag.Bool("real", false, "use Gemini through Genkit's googlegenai plugin (key from GEMINI_API_KEY or GOOGLE_API_KEY)")
	modelName := flag.String("model", "gemini-2.5-flash", "the Gemini model with -real")
	guests := flag.Int("guests", 2, "the user's answer to the server's question")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var g *gk.Genkit
	var model ai.ModelArg
	if *real {
		if os.Getenv("GEMINI_API_KEY") == "" && os.Getenv("GOOGLE_API_KEY") == "" {
			log.Fatal("-real needs GEMINI_API_KEY or GOOGLE_API_KEY")
		}
		g = gk.Init(ctx, gk.WithPlugins(&googlegenai.GoogleAI{}))
		model = googlegenai.GoogleAIModelRef(*modelName, nil)
	} else {
		g = gk.Init(ctx)
		model = DefineScripted(g)
	}
	if err := Run(ctx, os.Stdout, g, model, Prompt, *guests); err != nil {
		log.Fatal(err)
	}
}

// Run runs the agent against model and writes the transcript to w;
// guests is the user's answer to the server's question.
func Run(ctx context.Context, w io.Writer, g *gk.Genkit, model ai.ModelArg, prompt string, guests int) error {
	a, err := mcpadapter.New(tripserver.New(), &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
	if err != nil {
		return err
	}
	defer a.Close()
	tools, err := a.Tools(ctx)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	var artifacts []string
	ts, err := mg.New(tools, &mg.Options{OnResult: func(_ context.Context, t *mcpadapter.Tool, res *mcpadapter.Result) {
		if res.Artifact != nil && !res.IsError {
			mu.Lock()
			defer mu.Unlock()
			artifacts = append(artifacts, t.Name+" "+string(res.Artifact.StructuredContent))
		}
	}})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "user: %s\n", prompt)
	resp, err := gk.Generate(ctx, g, ai.WithModel(model), ai.WithPrompt(prompt), ai.WithTools(ts.Refs()...))
	printed := 0 // the messages of the history printed so far
	for n := 0; err == nil && resp.FinishReason == ai.FinishReasonInterrupted; n++ {
		if n == maxRestarts {
			return fmt.Errorf("still interrupted after %d restarts", n)
		}
		hist := resp.History()
		printHistory(w, hist[printed:])
		printed = len(hist)
		pending := ts.Interrupts(resp)
		if len(pending) == 0 {
			return errors.New("interrupted by something other than an MCP server's question")
		}
		var restarts []*ai.Part
		for _, p := range pending {
			part, err := resume(ctx, w, ts, p, guests)
			if err != nil {
				return err
			}
			restarts = append(restarts, part)
		}
		resp, err = gk.Generate(ctx, g, ai.WithModel(model), ai.WithMessages(resp.History()...),
			ai.WithTools(ts.Refs()...), ai.WithToolRestarts(restarts...))
	}
	if err != nil {
		return err // a transport failure, or the model's
	}
	printHistory(w, resp.History()[printed:])
	slices.Sort(artifacts)
	for _, s := range artifacts {
		fmt.Fprintf(w, "  (structured content for the application: %s)\n", s)
	}
	return nil
}

// resume asks the user until the server has no more questions for p and
// returns the part that restarts its tool.
func resume(ctx context.Context, w io.Writer, ts *mg.Toolset, p mg.Pending, guests int) (*ai.Part, error) {
	for range maxRestarts {
		part, next, err := ts.Resume(ctx, p, ask(w, p, guests))
		if err != nil || next == nil {
			return part, err
		}
		p = *next // the server asked again
	}
	return nil, fmt.Errorf("%s: still asking after %d answers", p.Interrupt.ToolName, maxRestarts)
}

// ask asks the user the server's questions (here: answers them with
// guests).
func ask(w io.Writer, p mg.Pending, guests int) *elicitation.Resume {
	res := &elicitation.Resume{Responses: map[string]elicitation.Response{}}
	for _, r := range p.Interrupt.Requests {
		fmt.Fprintf(w, "server asks the user (%s, a Genkit interrupt): %s\n", p.Interrupt.ToolName, r.Message)
		res.Responses[r.Key] = elicitation.Response{Action: elicitation.Accept, Content: map[string]any{"guests": guests}}
		b, _ := json.Marshal(res.Responses[r.Key].Content)
		fmt.Fprintf(w, "user answers: %s\n", b)
	}
	return res
}

// printHistory prints the conversation after the prompt: the model's tool
// requests, the tools' responses in the same order, the model's text.
func printHistory(w io.Writer, msgs []*ai.Message) {
	for _, m := range msgs {
		switch m.Role {
		case ai.RoleModel:
			for _, p := range m.Content {
				if p.IsToolRequest() {
					in, _ := json.Marshal(p.ToolRequest.Input)
					fmt.Fprintf(w, "model calls %s %s\n", p.ToolRequest.Name, in)
				} else if p.IsText() && p.Text != "" {
					fmt.Fprintf(w, "model: %s\n", p.Text)
				}
			}
		case ai.RoleTool:
			for _, r := range responses(m) {
				fmt.Fprintf(w, "tool %s: %v\n", r.Name, r.Output)
			}
		}
	}
}

// responses returns a tool message's responses in the order of their
// requests (Genkit adds them as they finish).
func responses(m *ai.Message) []*ai.ToolResponse {
	var out []*ai.ToolResponse
	for _, p := range m.Content {
		if p.IsToolResponse() {
			out = append(out, p.ToolResponse)
		}
	}
	slices.SortFunc(out, func(a, b *ai.ToolResponse) int { return strings.Compare(a.Ref, b.Ref) })
	return out
}

// DefineScripted defines a model that plans the trip without a network:
// on the user's turn it asks for the tools, all at once; once they
// answered, it sums up what they said.
func DefineScripted(g *gk.Genkit) ai.Model {
	return gk.DefineModel(g, "example/scripted", &ai.ModelOptions{Supports: &ai.ModelSupports{Tools: true, Multiturn: true}},
		func(_ context.Context, req *ai.ModelRequest, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			last := req.Messages[len(req.Messages)-1]
			if last.Role != ai.RoleTool {
				return &ai.ModelResponse{Request: req, FinishReason: ai.FinishReasonStop, Message: ai.NewModelMessage(
					ai.NewToolRequestPart(&ai.ToolRequest{Name: "forecast", Ref: "call_1", Input: map[string]any{"city": "Paris"}}),
					ai.NewToolRequestPart(&ai.ToolRequest{Name: "forecast", Ref: "call_2", Input: map[string]any{"city": "Berlin"}}),
					ai.NewToolRequestPart(&ai.ToolRequest{Name: "book_table", Ref: "call_3", Input: map[string]any{"restaurant": "Chez Marie", "date": "Friday"}}),
				)}, nil
			}
			var said []string
			for _, r := range responses(last) {
				said = append(said, fmt.Sprint(r.Output))
			}
			return &ai.ModelResponse{Request: req, FinishReason: ai.FinishReasonStop,
				Message: ai.NewModelTextMessage("Here is Friday. " + strings.Join(said, " "))}, nil
		})
}

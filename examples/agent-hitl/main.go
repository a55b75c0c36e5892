// Command agent-hitl runs an agent whose MCP tool asks the user a question
// mid-call (elicitation). The question stops the run as an interrupt; the
// program prints it, answers it as a person would, resumes the run and
// prints the final answer.
//
//	go run ./examples/agent-hitl             # a 2026-07-28 server, in-process
//	go run ./examples/agent-hitl -era legacy # a handshake-era server over stdio
//
// No LLM is reachable here, so the chat model is scripted: it asks for the
// booking tool, then summarises what the tool said. Replace it with any
// eino ToolCallingChatModel (eino-ext's OpenAI model, say) and the rest of
// the code stays the same.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/eino"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	era := flag.String("era", "modern", "protocol era of the server: modern (2026-07-28) or legacy (initialize handshake)")
	serve := flag.Bool("serve", false, "run as the stdio server (used by -era legacy)")
	flag.Parse()
	if *serve {
		srv := bookingServer([]string{"2025-11-25"})
		if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			log.Fatal(err)
		}
		return
	}

	ctx := context.Background()
	var target any = bookingServer(nil)
	if *era == "legacy" {
		self, err := os.Executable()
		if err != nil {
			log.Fatal(err)
		}
		target = mcpadapter.Command{Path: self, Args: []string{"-serve"}}
	}
	adapter, err := mcpadapter.New(target, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
	if err != nil {
		log.Fatal(err)
	}
	defer adapter.Close()
	tools, err := adapter.Tools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	agent, err := eino.NewAgent(ctx, &scriptedModel{}, tools, eino.AgentConfig{Instruction: "You book tables."})
	if err != nil {
		log.Fatal(err)
	}

	events := agent.Query(ctx, "run-1", "Book a table for Friday")
	for {
		pending := show(events)
		if len(pending) == 0 {
			return
		}
		answers := map[string]*elicitation.Resume{}
		for _, p := range pending {
			payload, _ := json.MarshalIndent(p.Interrupt, "  ", "  ")
			fmt.Printf("interrupt %s:\n  %s\n", p.ID, payload)
			answers[p.ID] = answer(p.Interrupt)
			reply, _ := json.Marshal(answers[p.ID])
			fmt.Printf("resume with: %s\n", reply)
		}
		if events, err = agent.Resume(ctx, "run-1", answers); err != nil {
			log.Fatal(err)
		}
	}
}

// answer answers each question as a person at a terminal would.
func answer(in *elicitation.Interrupt) *elicitation.Resume {
	r := &elicitation.Resume{Responses: map[string]elicitation.Response{}}
	for _, q := range in.Requests {
		r.Responses[q.Key] = elicitation.Response{Action: elicitation.Accept, Content: map[string]any{"guests": 4}}
	}
	return r
}

// show prints a run's events and returns its interrupts.
func show(events *adk.AsyncIterator[*adk.AgentEvent]) []eino.Pending {
	var pending []eino.Pending
	for {
		ev, ok := events.Next()
		if !ok {
			return pending
		}
		if ev.Err != nil {
			log.Fatal(ev.Err)
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil {
			if msg, err := ev.Output.MessageOutput.GetMessage(); err == nil {
				for _, tc := range msg.ToolCalls {
					fmt.Printf("model calls %s(%s)\n", tc.Function.Name, tc.Function.Arguments)
				}
				switch {
				case msg.Role == schema.Tool:
					fmt.Printf("tool %s says: %s\n", ev.Output.MessageOutput.ToolName, msg.Content)
				case msg.Content != "":
					fmt.Printf("final answer: %s\n", msg.Content)
				}
			}
		}
		if p := eino.Interrupts(ev); p != nil {
			pending = p
		}
	}
}

type bookIn struct {
	Date string `json:"date" jsonschema:"the day to book"`
}

// bookingServer is an MCP server whose tool asks how many guests. versions
// restricts its protocol versions (nil: all, including 2026-07-28).
func bookingServer(versions []string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "restaurant", Version: "1.0.0"}, &mcp.ServerOptions{SupportedProtocolVersions: versions})
	mcp.AddTool(srv, &mcp.Tool{Name: "book_table", Description: "Book a table; asks the user how many guests."},
		func(_ context.Context, req *mcp.CallToolRequest, in bookIn) (*mcp.CallToolResult, any, error) {
			if r, ok := req.Params.InputResponses["guests"].(*mcp.ElicitResult); ok {
				text := "The user did not give the number of guests (" + r.Action + "); nothing was booked."
				if r.Action == "accept" {
					text = fmt.Sprintf("Table for %v booked on %s.", r.Content["guests"], in.Date)
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"guests": &mcp.ElicitParams{
				Mode:    "form",
				Message: "How many guests on " + in.Date + "?",
				RequestedSchema: map[string]any{"type": "object", "required": []any{"guests"},
					"properties": map[string]any{"guests": map[string]any{"type": "integer", "minimum": 1, "maximum": 12}}},
			}}}, nil, nil
		})
	return srv
}

// scriptedModel calls book_table once, then reports what the tool said.
type scriptedModel struct{}

func (m *scriptedModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return m, nil
}

func (m *scriptedModel) Generate(_ context.Context, in []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	last := in[len(in)-1]
	if last.Role != schema.Tool {
		return schema.AssistantMessage("", []schema.ToolCall{{ID: "call-1", Type: "function",
			Function: schema.FunctionCall{Name: "book_table", Arguments: `{"date":"Friday"}`}}}), nil
	}
	return schema.AssistantMessage("Done: "+strings.TrimSpace(last.Content), nil), nil
}

func (m *scriptedModel) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

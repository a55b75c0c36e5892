// Command config-openai loads the MCP servers of a
// claude_desktop_config.json-style file and runs an OpenAI Chat
// Completions turn with their tools (the mcpadapter/openai binding): the
// model calls a tool of each server at once, the calls run in parallel,
// and the model answers from the results.
//
// By default it reads claude_desktop_config.json next to this file, whose
// two servers are this program itself run as stdio servers ("serve
// weather", "serve people"), and talks to a scripted fake of the OpenAI
// API on loopback: it runs with no network and no key.
//
//	go run ./config-openai
//	OPENAI_API_KEY=... go run ./config-openai -real -config ~/Library/Application\ Support/Claude/claude_desktop_config.json -q "..."
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/examples/internal/fakeprovider"
	"github.com/mcpadapter/mcpadapter/openai"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

//go:embed claude_desktop_config.json
var defaultConfig []byte

const question = "What is the weather in Paris, and how many people live there?"

func main() {
	if len(os.Args) == 3 && os.Args[1] == "serve" {
		if err := serve(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "config-openai serve:", err)
			os.Exit(1)
		}
		return
	}
	configFile := flag.String("config", "", "an mcpServers file (default: claude_desktop_config.json next to this program)")
	useReal := flag.Bool("real", false, "use the real API (key from OPENAI_API_KEY) instead of the loopback fake")
	model := flag.String("model", "gpt-4.1-mini", "model")
	q := flag.String("q", question, "the question")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, *configFile, *useReal, *model, *q); err != nil {
		fmt.Fprintln(os.Stderr, "config-openai:", err)
		os.Exit(1)
	}
}

// loadConfig reads the config file, or the one next to this program, whose
// ${CONFIG_OPENAI_SERVER} is this program's own path.
func loadConfig(file string) (*mcpadapter.Config, error) {
	if file != "" {
		return mcpadapter.LoadConfig(file)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return mcpadapter.ParseConfigEnv(defaultConfig, func(name string) (string, bool) {
		if name == "CONFIG_OPENAI_SERVER" {
			return self, true
		}
		return os.LookupEnv(name)
	})
}

func run(ctx context.Context, w io.Writer, configFile string, useReal bool, model, q string) (err error) {
	cfg, err := loadConfig(configFile)
	if err != nil {
		return err
	}
	a, err := mcpadapter.New(cfg, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	tools, err := a.Tools(ctx) // every server's tools, named server_tool
	if err != nil {
		return err
	}
	for _, t := range tools {
		fmt.Fprintf(w, "tool %s (server %s): %s\n", t.Name, t.Server, t.Description)
	}
	ts, err := openai.New(tools, nil)
	if err != nil {
		return err
	}

	opts := []option.RequestOption{option.WithAPIKey(os.Getenv("OPENAI_API_KEY"))}
	if !useReal {
		fake := fakeprovider.OpenAIChat(fakeprovider.Script{Calls: []fakeprovider.Call{
			{Name: "weather_get_forecast", Args: map[string]any{"city": "Paris"}},
			{Name: "people_get_population", Args: map[string]any{"city": "Paris"}},
		}})
		defer func() { fake.Close(); err = errors.Join(err, fake.Err()) }()
		opts = []option.RequestOption{option.WithAPIKey("fake-key"), option.WithBaseURL(fake.URL + "/v1")}
	} else if os.Getenv("OPENAI_API_KEY") == "" {
		return errors.New("-real needs OPENAI_API_KEY")
	}
	client := oai.NewClient(opts...)
	params := oai.ChatCompletionNewParams{
		Model:    model,
		Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage(q)},
		Tools:    ts.ChatTools(),
	}
	fmt.Fprintf(w, "user: %s\n", q)
	for range 8 {
		completion, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			return err
		}
		if len(completion.Choices) == 0 {
			return errors.New("the model sent no choice")
		}
		msg := completion.Choices[0].Message
		calls := openai.ChatCalls(msg)
		if len(calls) == 0 {
			fmt.Fprintf(w, "assistant: %s\n", msg.Content)
			return nil
		}
		params.Messages = append(params.Messages, msg.ToParam())
		outs, err := ts.Run(ctx, calls) // in parallel; err: a server could not be reached
		if err != nil {
			return err
		}
		for _, o := range outs {
			fmt.Fprintf(w, "tool %s %s: %s\n", o.Call.Name, o.Call.Arguments, o.Text())
			params.Messages = append(params.Messages, o.ChatMessage())
		}
	}
	return errors.New("no final answer after 8 turns")
}

type cityArgs struct {
	City string `json:"city" jsonschema:"the city's name, e.g. Paris"`
}

// serve runs one of the config's two servers over stdio.
func serve(name string) error {
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1.0.0"}, nil)
	switch name {
	case "weather":
		mcp.AddTool(srv, &mcp.Tool{Name: "get_forecast", Description: "Tomorrow's weather in a city."},
			func(_ context.Context, _ *mcp.CallToolRequest, a cityArgs) (*mcp.CallToolResult, any, error) {
				return text(fmt.Sprintf("Tomorrow in %s: sunny, 21 °C.", a.City)), nil, nil
			})
	case "people":
		units := os.Getenv("PEOPLE_UNITS") // from the config's "env"
		mcp.AddTool(srv, &mcp.Tool{Name: "get_population", Description: "How many people live in a city."},
			func(_ context.Context, _ *mcp.CallToolRequest, a cityArgs) (*mcp.CallToolResult, any, error) {
				if a.City != "Paris" {
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "only Paris is known"}}}, nil, nil
				}
				return text(fmt.Sprintf("Paris has 2.1 %s inhabitants.", units)), nil, nil
			})
	default:
		return fmt.Errorf("no server %q (weather, people)", name)
	}
	return srv.Run(context.Background(), &mcp.StdioTransport{})
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

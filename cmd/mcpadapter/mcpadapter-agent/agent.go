package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/cloudwego/eino-ext/components/model/openai"
	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/cmdline"
	"github.com/mcpadapter/mcpadapter/eino"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/term"
	"github.com/spf13/cobra"
)

// agentFlags are the agent command's flags.
type agentFlags struct {
	model, baseURL, apiKey, once, system string
	noStream, search, watch              bool
}

// app is the agent program's command-line state, the same as mcpadapter's
// (global flags, streams, exit status).
type app struct {
	*cmdline.App
}

// agentCommand is the agent program's root command.
func (a *app) agentCommand() *cobra.Command {
	var f agentFlags
	cmd := &cobra.Command{
		Use:     "mcpadapter-agent " + cmdline.AgentUse,
		Short:   cmdline.AgentShort,
		Long:    cmdline.AgentLong,
		Example: cmdline.AgentExample,
		// "mcpadapter agent" runs this program: help and usage say so.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "mcpadapter agent"},
		// A target, or a command after "--"; demo-server is the only
		// subcommand.
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runAgent(cmd, args, f)
		},
	}
	cmd.CompletionOptions.DisableDefaultCmd = true
	fl := cmd.Flags()
	fl.StringVarP(&f.model, "model", "m", "", "chat model `name` (required)")
	fl.StringVar(&f.baseURL, "base-url", "", "OpenAI-compatible API base `URL` (default $OPENAI_BASE_URL, else OpenAI's)")
	fl.StringVar(&f.apiKey, "api-key", "", "API `key` (default $OPENAI_API_KEY)")
	fl.StringVar(&f.once, "once", "", "ask this `question`, print the answer and exit")
	fl.StringVar(&f.system, "system", "You are a helpful assistant. Use the tools when they help.", "system `instruction`")
	fl.BoolVar(&f.noStream, "no-stream", false, "print the answer when it is complete instead of streaming it")
	fl.BoolVar(&f.search, "search", false, "give the model search_tools and call_tool instead of every tool (tool search)")
	fl.BoolVar(&f.watch, "watch", false, "follow the servers' tool lists: a tool a server adds or removes while the agent runs reaches the model")
	return cmd
}

func (a *app) runAgent(cmd *cobra.Command, args []string, f agentFlags) error {
	ctx := cmd.Context()
	if f.model == "" {
		return cmdline.Usagef("--model is required (for example --model gpt-4o-mini)")
	}
	if f.baseURL == "" {
		f.baseURL = os.Getenv("OPENAI_BASE_URL")
	}
	if f.apiKey == "" {
		f.apiKey = os.Getenv("OPENAI_API_KEY")
	}
	// With no key, no Authorization header is sent (local servers such as
	// Ollama and vLLM need none); a remote server is told below.
	endpoint := newModelEndpoint(f.baseURL, f.model, f.apiKey)
	oo := cmdline.OpenOptions{Elicit: true, SkipUnavailable: true, WatchTools: f.watch}
	if f.search {
		oo.ToolSearch = &mcpadapter.ToolSearch{Threshold: -1} // always the pair
	}
	s, err := a.Open(ctx, cmd, args, oo)
	if err != nil {
		return err
	}
	defer s.Close()
	cfg := eino.AgentConfig{Instruction: f.system, Streaming: !f.noStream}
	if f.watch && !f.search { // call_tool follows the servers by itself
		ads := s.Adapters()
		if len(ads) != 1 {
			return cmdline.Usagef("--watch follows a target's or a config's servers; the built-in demo runs %d apart", len(ads))
		}
		cfg.Live = ads[0]
	}
	tools, err := s.Tools(ctx)
	if err != nil {
		return err
	}
	transport := &modelTransport{base: http.DefaultTransport}
	chat, err := openai.NewChatModel(ctx, &openai.ChatModelConfig{APIKey: f.apiKey, BaseURL: f.baseURL, Model: f.model,
		HTTPClient: &http.Client{Transport: transport}})
	if err != nil {
		return fmt.Errorf("chat model: %w", err)
	}
	ag, err := eino.NewAgent(ctx, chat, tools, cfg)
	if err != nil {
		return err
	}
	for _, sk := range ag.Skipped {
		fmt.Fprintf(a.Stderr, "mcpadapter: left out %v\n", sk.Err)
	}
	fmt.Fprintf(a.Stderr, "agent: model %s, %d tools from %s\n", f.model, len(tools), s.Source())
	if note := endpoint.keyNote(); note != "" {
		fmt.Fprintf(a.Stderr, "mcpadapter: %s\n", note)
	}
	prompter := term.NewPrompter(a.Stdin, a.Stderr)
	var history []adk.Message
	turn := 0
	ask := func(question string) error {
		turn++
		history = append(history, schema.UserMessage(question))
		transport.record(nil)
		answer, err := a.agentTurn(ctx, ag, prompter, fmt.Sprintf("turn-%d", turn), history)
		if err != nil {
			return endpoint.explain(ctx, err, transport.failure())
		}
		history = append(history, schema.AssistantMessage(answer, nil))
		return nil
	}
	if f.once != "" {
		return ask(f.once)
	}
	for {
		line, ok, err := prompter.Line(ctx, "> ")
		if err != nil {
			return err
		}
		line = strings.TrimSpace(line)
		if !ok || line == "" || line == "exit" || line == "quit" {
			return nil
		}
		if err := ask(line); err != nil {
			return err
		}
	}
}

// agentTurn runs one user turn to its final answer, answering the
// servers' questions at the terminal on the way.
func (a *app) agentTurn(ctx context.Context, ag *eino.Agent, prompter *term.Prompter, checkpoint string, history []adk.Message) (string, error) {
	it := ag.Runner.Run(ctx, history, adk.WithCheckPointID(checkpoint))
	for range 50 {
		answer, pending, err := a.render(it)
		if err != nil {
			return "", err
		}
		if len(pending) == 0 {
			return answer, nil
		}
		answers := make(map[string]*elicitation.Resume, len(pending))
		for _, p := range pending {
			r, err := prompter.AskAll(ctx, p.Interrupt)
			if err != nil {
				return "", err
			}
			answers[p.ID] = r
		}
		if it, err = ag.Resume(ctx, checkpoint, answers); err != nil {
			return "", err
		}
	}
	return "", errors.New("the run kept asking questions (50 rounds); giving up")
}

// render prints a run's events as they come: the answer on stdout, tool
// calls and results on stderr. It returns the final answer and the
// interrupts the run stopped at.
func (a *app) render(it *adk.AsyncIterator[*adk.AgentEvent]) (string, []eino.Pending, error) {
	var answer string
	var pending []eino.Pending
	for {
		ev, ok := it.Next()
		if !ok {
			return answer, pending, nil
		}
		if ev.Err != nil {
			return "", nil, ev.Err
		}
		if p := eino.Interrupts(ev); p != nil {
			pending = p
		}
		if ev.Output == nil || ev.Output.MessageOutput == nil {
			continue
		}
		mv := ev.Output.MessageOutput
		msg, streamed, err := a.readMessage(mv)
		if err != nil {
			return "", nil, err
		}
		switch {
		case mv.Role == schema.Tool:
			out := msg.Content
			if ev.Action != nil {
				if o, ok := ev.Action.CustomizedAction.(*eino.Output); ok && o.IsError {
					out = "error: " + out
				}
			}
			fmt.Fprintf(a.Stderr, "← %s: %s\n", mv.ToolName, cmdline.FirstLine(out, 200))
		case len(msg.ToolCalls) > 0:
			for _, tc := range msg.ToolCalls {
				fmt.Fprintf(a.Stderr, "→ %s(%s)\n", tc.Function.Name, cmdline.FirstLine(tc.Function.Arguments, 200))
			}
		case msg.Content != "":
			answer = msg.Content
			if !streamed {
				fmt.Fprintln(a.Stdout, msg.Content)
			}
		}
	}
}

// readMessage returns the event's message, printing an assistant answer's
// text to stdout as it streams in.
func (a *app) readMessage(mv *adk.MessageVariant) (*schema.Message, bool, error) {
	if !mv.IsStreaming {
		m, err := mv.GetMessage()
		return m, false, err
	}
	var chunks []*schema.Message
	printed := false
	for {
		chunk, err := mv.MessageStream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, false, err
		}
		chunks = append(chunks, chunk)
		if mv.Role == schema.Assistant && chunk.Content != "" {
			fmt.Fprint(a.Stdout, chunk.Content)
			printed = true
		}
	}
	if printed {
		fmt.Fprintln(a.Stdout)
	}
	if len(chunks) == 0 {
		return &schema.Message{Role: mv.Role}, printed, nil
	}
	m, err := schema.ConcatMessages(chunks)
	return m, printed, err
}

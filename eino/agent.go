package eino

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/schemaprofile"
)

// AgentConfig configures NewAgent. The zero value is ready to use.
type AgentConfig struct {
	// Name and Description name the agent for eino; they default to
	// "assistant" and "An assistant that uses MCP tools."
	Name, Description string
	// Instruction is the system prompt.
	Instruction string
	// Store keeps checkpoints so an interrupted run can be resumed; nil
	// means a new MemoryStore. Use a shared store to resume in another
	// process (2026-07-28 servers only: a handshake-era call waits in the
	// process that made it).
	Store adk.CheckPointStore
	// Streaming streams the model's answer.
	Streaming bool
	// MaxIterations bounds the model calls of one run; zero means eino's
	// default (20).
	MaxIterations int
	// Sequential runs a turn's tool calls one at a time instead of in
	// parallel. To hold back only the calls to one server, set its
	// ClientOptions.MaxConcurrentCalls ("maxConcurrentCalls" in a config).
	Sequential bool
	// TransportErrorsAsResults keeps a run going when a server cannot be
	// reached (it died mid-run, the network is down, it did not answer
	// in time): the model gets a tool result saying the server is
	// unavailable (mcpadapter.TransportErrorResult) instead of the run
	// ending with the *mcpadapter.TransportError. The tool event's
	// *Output has Unavailable set. A run whose own context ends still
	// ends.
	TransportErrorsAsResults bool
	// OnTransportError, if set, is told about each transport failure a
	// tool turned into a result for the model (with
	// TransportErrorsAsResults, or with the adapter's
	// Options.TransportErrorsAsResults): the typed error, for the
	// application. It runs on the tool's goroutine.
	OnTransportError func(context.Context, *mcpadapter.TransportError)
	// ExtraTools are more eino tools to offer the model.
	ExtraTools []tool.BaseTool
	// Live, if set, is the adapter the tools came from, so the agent
	// follows its servers' tool lists: before each model call, when
	// Live.ToolsVersion says a server changed its list, the agent lists
	// Live.Tools again and gives the model the new list (per call, with
	// model.WithTools, which eino-ext's chat models honour); the tools a
	// server added run through the tools node's unknown-tool path, and
	// a removed tool the model still calls answers that it was removed.
	// Build Live with Options.WatchTools (or its clients with
	// ClientOptions.WatchTools). With Options.ToolSearch the pair never
	// changes and needs no Live: call_tool follows the servers itself.
	Live *mcpadapter.Adapter
	// Profile is the schema profile of the MCP tools (ToolOptions.Profile);
	// empty keeps the servers' schemas as before profiles.
	Profile schemaprofile.Profile
}

// Agent is an eino ChatModelAgent with MCP tools, run by an adk.Runner
// with a checkpoint store.
type Agent struct {
	// Runner runs the agent; use it directly for everything Agent does
	// not wrap.
	Runner *adk.Runner
	// Skipped lists the tools left out because their schemas cannot be
	// represented (empty when none were).
	Skipped []SkippedTool
}

// NewAgent builds an agent that answers with chat and uses tools: the Go
// counterpart of create_agent(model, tools). Independent tool calls of one
// model turn run in parallel. A tool the model names that does not exist
// gets an answer listing the tools that do, and the run goes on.
func NewAgent(ctx context.Context, chat model.ToolCallingChatModel, tools []*mcpadapter.Tool, cfg AgentConfig) (*Agent, error) {
	if chat == nil {
		return nil, errors.New("eino: NewAgent needs a chat model")
	}
	ets, skipped := ToolsWith(tools, &ToolOptions{Profile: cfg.Profile})
	for _, et := range ets {
		if t, ok := et.(*Tool); ok {
			t.soft, t.onFailure = cfg.TransportErrorsAsResults, cfg.OnTransportError
		}
	}
	ets = append(ets, cfg.ExtraTools...)
	names := make([]string, 0, len(ets))
	for _, t := range ets {
		if info, err := t.Info(ctx); err == nil {
			names = append(names, info.Name)
		}
	}
	slices.Sort(names)
	unknown := func(_ context.Context, name, _ string) (string, error) {
		return fmt.Sprintf("There is no tool named %q. The tools are: %s.", name, strings.Join(names, ", ")), nil
	}
	if cfg.Live != nil {
		l := newLiveTools(ctx, cfg, ets)
		chat, unknown = liveModel{inner: chat, l: l}, l.unknown
	}
	if cfg.Name == "" {
		cfg.Name = "assistant"
	}
	if cfg.Description == "" {
		cfg.Description = "An assistant that uses MCP tools."
	}
	if cfg.Store == nil {
		cfg.Store = NewMemoryStore()
	}
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name:          cfg.Name,
		Description:   cfg.Description,
		Instruction:   cfg.Instruction,
		Model:         chat,
		MaxIterations: cfg.MaxIterations,
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{
			Tools:               ets,
			ExecuteSequentially: cfg.Sequential,
			UnknownToolsHandler: unknown,
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("eino: building the agent: %w", err)
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent, EnableStreaming: cfg.Streaming, CheckPointStore: cfg.Store})
	return &Agent{Runner: runner, Skipped: skipped}, nil
}

// Query starts a run on a user message. checkpointID names the run's
// checkpoint, needed to resume it after an interrupt.
func (a *Agent) Query(ctx context.Context, checkpointID, message string) *adk.AsyncIterator[*adk.AgentEvent] {
	return a.Runner.Query(ctx, message, adk.WithCheckPointID(checkpointID), RunOption())
}

// Resume continues an interrupted run, answering each elicitation
// interrupt by its ID (see Pending.ID).
func (a *Agent) Resume(ctx context.Context, checkpointID string, answers map[string]*elicitation.Resume) (*adk.AsyncIterator[*adk.AgentEvent], error) {
	targets := make(map[string]any, len(answers))
	for id, r := range answers {
		targets[id] = r
	}
	return a.Runner.ResumeWithParams(ctx, checkpointID, &adk.ResumeParams{Targets: targets})
}

// Pending is one elicitation interrupt of an agent run.
type Pending struct {
	// ID identifies the interrupt to Resume. IDs are new at every
	// interrupt: use those of the latest event.
	ID string
	// Interrupt holds the questions.
	Interrupt *elicitation.Interrupt
}

// Interrupts returns the elicitation interrupts an event carries, in the
// order of the tool calls: those with questions for the user.
//
// A tool call queued behind another call's question on a handshake-era
// server interrupts too, with no questions; it is left out. The binding
// resumes it by itself when the run is resumed, whether or not Resume
// names it: it runs once the answer it waits for is in. So an event whose
// run was interrupted carries at least one interrupt with questions, as
// long as no other run uses the same handshake-era tools at the same time
// (a call queued behind another run's question stops this run with none).
func Interrupts(ev *adk.AgentEvent) []Pending {
	if ev == nil || ev.Action == nil || ev.Action.Interrupted == nil {
		return nil
	}
	var out []Pending
	for _, ic := range ev.Action.Interrupted.InterruptContexts {
		if in, ok := ic.Info.(*elicitation.Interrupt); ok && ic.IsRootCause && len(in.Requests) > 0 {
			out = append(out, Pending{ID: ic.ID, Interrupt: in})
		}
	}
	return out
}

// MemoryStore is an adk.CheckPointStore in memory, safe for concurrent use.
type MemoryStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{m: make(map[string][]byte)} }

// Get implements adk.CheckPointStore.
func (s *MemoryStore) Get(_ context.Context, id string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[id]
	return b, ok, nil
}

// Set implements adk.CheckPointStore.
func (s *MemoryStore) Set(_ context.Context, id string, b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[id] = append([]byte(nil), b...)
	return nil
}

// Delete removes a checkpoint; eino never deletes them itself.
func (s *MemoryStore) Delete(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

var _ adk.CheckPointStore = (*MemoryStore)(nil)

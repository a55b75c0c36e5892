// Package taskserver is a go-sdk MCP server that speaks the 2026-07-28
// Tasks extension (io.modelcontextprotocol/tasks), for tests: go-sdk
// v1.8.0 has no tasks, so tools/call answers with a task (resultType
// "task") from a receiving middleware, and tasks/get, tasks/update and
// tasks/cancel are custom methods. Tasks live in the Server, not in a
// session, so a client in another process can pick one up.
//
// Core (Options.Core) makes it a 2025-11-25 server instead: see core.go.
//
// Tools: work (steps × stepMs of work, then "done: N steps"), fail (the
// task fails with a JSON-RPC error), ask (waits for the user's name,
// then "hello NAME"), asktwice (asks for the name, works a step, then
// asks the same question under the same key again: "hello A, then B"),
// forget (the server loses the task at once: tasks/get answers "unknown
// task"). A client that does not declare the extension gets each tool's
// result at once, as a plain call.
package taskserver

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Extension is the Tasks extension's identifier.
const Extension = "io.modelcontextprotocol/tasks"

// Options configure a Server.
type Options struct {
	// PollInterval is the interval the server advises, in milliseconds;
	// zero advises none.
	PollInterval int64
	// Core makes it a 2025-11-25 server with that protocol's experimental
	// tasks instead (see core.go); serve it with Handler.
	Core bool
	// LagUpdates makes tasks/update eventually consistent, as the
	// extension allows: the answers are acknowledged at once and taken by
	// the task at the second tasks/get after them, so one tasks/get still
	// shows the question answered.
	LagUpdates bool
	// OnCall, if set, is called with the tools/call's context and the
	// tool's name before the server decides how to answer a tools/call
	// that may be a task (the client declares the extension; in Core
	// mode, the call asks for a task). It may block, as a slow server
	// does. It returns whether the server makes a task: false answers
	// the call at once with the tool's result, as a plain call.
	OnCall func(ctx context.Context, tool string) (task bool)
	// OnCreate, if set, is called with the tools/call's context and the
	// new task's id after the task is made and before the tools/call is
	// answered.
	OnCreate func(ctx context.Context, id string)
	// Refuse names tasks/* methods the server answers with a JSON-RPC
	// error (-32603, "METHOD refused"), as a server that fails them.
	Refuse []string
	// AskURL, if set, makes the ask tool's question a URL-mode
	// elicitation of that URL (as a hostile server sends).
	AskURL string
	// NoLastUpdated leaves lastUpdatedAt out of every task it shows, as
	// a server that does not keep it does.
	NoLastUpdated bool
	// ShowSteps makes each step of a task's work last, besides its
	// stepMs, until an answer about the task (tasks/get, the tools/call
	// that made it) has shown that step: a client that polls sees every
	// step, however late its polls come.
	ShowSteps bool
}

// Server is the MCP server and the tasks it runs.
type Server struct {
	MCP  *mcp.Server
	opts Options

	ctx    context.Context // ends on Close: every task's work stops
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	seq     int
	tasks   map[string]*task
	started map[string]int // by tool: how many times the work began
	gets    map[string][]time.Time
	cancels int
	updates int
}

type task struct {
	id, tool string
	status   string
	message  string
	created  time.Time
	result   json.RawMessage            // completed
	err      *jsonrpc.Error             // failed
	asks     map[string]any             // input_required: the inputRequests
	updated  time.Time                  // the last change of status
	lagged   map[string]json.RawMessage // LagUpdates: answers not taken yet
	lagGets  int                        // LagUpdates: tasks/get since lagged came
	answer   chan map[string]json.RawMessage
	stop     context.CancelFunc
	done     chan struct{} // closed when the task is over
	ttl      *int64        // asked by the client (2025-11-25)
	shown    chan struct{} // ShowSteps: closed when an answer shows the step
}

// New returns a Server; Close stops the work of its tasks.
func New(opts Options) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{opts: opts, ctx: ctx, cancel: cancel, tasks: map[string]*task{}, started: map[string]int{}, gets: map[string][]time.Time{}}
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}
	caps.AddExtension(Extension, map[string]any{})
	so := &mcp.ServerOptions{Capabilities: caps}
	if opts.Core {
		so.SupportedProtocolVersions = []string{"2025-11-25"}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "taskserver", Version: "1"}, so)
	type workArgs struct {
		Steps  int `json:"steps,omitempty"`
		StepMs int `json:"stepMs,omitempty"`
	}
	plain := func(ctx context.Context, req *mcp.CallToolRequest, _ workArgs) (*mcp.CallToolResult, any, error) {
		if opts.Core && taskSupport[req.Params.Name] == "required" {
			return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "tool " + req.Params.Name + " requires task augmentation"}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "plain call of " + req.Params.Name}}}, nil, nil
	}
	for _, name := range []string{"work", "fail", "ask", "asktwice", "forget"} {
		mcp.AddTool(srv, &mcp.Tool{Name: name, Description: "a task tool: " + name}, plain)
	}
	srv.AddReceivingMiddleware(s.middleware)
	if opts.Core {
		srv.AddReceivingMiddleware(s.coreMiddleware)
		must(mcp.AddReceivingCustomMethod(srv, "tasks/result", s.result))
		must(mcp.AddReceivingCustomMethod(srv, "tasks/list", s.list))
	}
	must(mcp.AddReceivingCustomMethod(srv, "tasks/get", s.get))
	must(mcp.AddReceivingCustomMethod(srv, "tasks/update", s.update))
	must(mcp.AddReceivingCustomMethod(srv, "tasks/cancel", s.cancelTask))
	s.MCP = srv
	return s
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// refused returns the error for a refused method, or nil.
func (s *Server) refused(method string) error {
	for _, m := range s.opts.Refuse {
		if m == method {
			return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: method + " refused"}
		}
	}
	return nil
}

// Close stops every task's work and waits for it.
func (s *Server) Close() {
	s.cancel()
	s.wg.Wait()
}

// Started returns how many times the work of tool began.
func (s *Server) Started(tool string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started[tool]
}

// Gets returns the times tasks/get asked about the task.
func (s *Server) Gets(id string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.gets[id]...)
}

// Updates counts the tasks/update requests.
func (s *Server) Updates() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.updates
}

// Cancels counts the tasks/cancel requests.
func (s *Server) Cancels() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancels
}

// Status returns a task's status, or "" for a task the server does not
// know.
func (s *Server) Status(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.tasks[id]; t != nil {
		return t.status
	}
	return ""
}

// Running counts the tasks whose work goes on.
func (s *Server) Running() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, t := range s.tasks {
		if t.status == "working" || t.status == "input_required" {
			n++
		}
	}
	return n
}

// declares reports whether the request's per-request capabilities name
// the Tasks extension.
func declares(meta map[string]any) bool {
	caps, _ := meta[mcp.MetaKeyClientCapabilities].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	_, ok := ext[Extension]
	return ok
}

// middleware answers a tools/call with a task when the client declares
// the extension.
func (s *Server) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
		if !ok || s.opts.Core || !declares(p.Meta) {
			return next(ctx, method, req)
		}
		if s.opts.OnCall != nil && !s.opts.OnCall(ctx, p.Name) {
			return next(ctx, method, req)
		}
		var args struct {
			Steps  int `json:"steps"`
			StepMs int `json:"stepMs"`
		}
		if len(p.Arguments) > 0 {
			if err := json.Unmarshal(p.Arguments, &args); err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
			}
		}
		t := s.create(p.Name, args.Steps, time.Duration(args.StepMs)*time.Millisecond)
		if s.opts.OnCreate != nil {
			s.opts.OnCreate(ctx, t.id)
		}
		return s.view(t, true), nil
	}
}

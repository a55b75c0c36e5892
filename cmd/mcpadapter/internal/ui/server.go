// Package ui is mcpadapter's local web inspector: an HTTP server on a
// loopback port whose page shows the servers of one mcpadapter session
// (a URL, a command, a config's group, or the demo), their tools as forms
// made from their schemas, calls with their progress, questions and
// tasks, resources and prompts, the protocol trace, the tools as each
// model provider's profile sends them, and saved calls that export as Go
// tests.
//
// The page's assets are embedded (plain JavaScript and CSS, no build
// step). The server connects to nothing itself: the servers are the
// session's, fixed by the command line, and no request can name a
// command or a URL to connect to. A guard (guard.go) refuses every
// request without the session cookie, a loopback Host and the page's own
// Origin.
package ui

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/session"
)

//go:embed assets
var assets embed.FS

// Options configure an inspector.
type Options struct {
	// Session holds the servers to inspect. The inspector uses it and
	// never closes it.
	Session *session.Session
	// Recorder is where the session's clients log (see Recorder.Logger);
	// nil means no trace in the page.
	Recorder *Recorder
	// Target says how the servers are reached in a Go program, for the
	// tests that saved calls export; nil exports a test that reads
	// ./.mcp.json.
	Target *Target
	// Logger receives the inspector's own problems; nil means
	// slog.Default().
	Logger *slog.Logger
}

// Target is how an exported Go test reaches the servers: one of URL,
// Command, Config or Demo.
type Target struct {
	// URL is an http(s) endpoint.
	URL string
	// Command is a program and its arguments, run over stdio.
	Command []string
	// Script is a script or program path (mcpadapter.Script).
	Script string
	// Config is the path of an mcpServers config file.
	Config string
	// Demo names the built-in demo servers, reached as "mcpadapter
	// demo-server NAME" over stdio, each its own adapter with its tools
	// named NAME_tool.
	Demo []string
}

// Server is a running inspector.
type Server struct {
	opts    Options
	log     *slog.Logger
	guard   *guard
	events  *eventLog
	http    *http.Server
	url     string
	handler http.Handler

	ctx    context.Context // ends when Close is called
	cancel context.CancelFunc
	wg     sync.WaitGroup // the goroutines the server owns: serving, calls

	calls *calls
	saved *savedCalls
	state *state
	pair  searchPair
	views *views
}

// Serve serves the inspector on l, which must listen on a loopback
// address, until Close.
func Serve(l net.Listener, opts *Options) (*Server, error) {
	if opts == nil || opts.Session == nil {
		return nil, errors.New("ui: no session to inspect")
	}
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok || !addr.IP.IsLoopback() {
		return nil, fmt.Errorf("ui: %s is not a loopback address; the inspector listens on 127.0.0.1 or ::1 only", l.Addr())
	}
	s := &Server{opts: *opts, log: opts.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.opts.Recorder == nil {
		s.opts.Recorder = NewRecorder()
	}
	s.events = s.opts.Recorder.log
	port := strconv.Itoa(addr.Port)
	views, viewsListener, err := newViews(addr.IP, port)
	if err != nil {
		return nil, err
	}
	s.views = views
	s.guard = newGuard(port, views.origin)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.calls = newCalls(s)
	s.saved = &savedCalls{}
	s.state = &state{s: s}
	s.handler = s.guard.wrap(s.routes())
	s.http = &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
	host := "127.0.0.1"
	if addr.IP.To4() == nil {
		host = "[::1]"
	}
	s.url = "http://" + host + ":" + port + "/?token=" + s.guard.token
	for srv, l := range map[*http.Server]net.Listener{s.http: l, views.http: viewsListener} {
		s.goOwned(func() {
			if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("ui: serving stopped", "err", err)
			}
		})
	}
	return s, nil
}

// URL is the address to open, with the one-time token.
func (s *Server) URL() string { return s.url }

// Handler is the inspector's HTTP handler, guard included.
func (s *Server) Handler() http.Handler { return s.handler }

// Close stops serving, cancels the calls in flight and waits for them.
func (s *Server) Close() error {
	s.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	for _, srv := range []*http.Server{s.http, s.views.http} {
		if err := srv.Shutdown(ctx); err != nil {
			errs = append(errs, srv.Close())
		}
	}
	s.wg.Wait()
	return errors.Join(errs...)
}

// goOwned runs f on a goroutine the server owns: Close waits for it.
func (s *Server) goOwned(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	files := http.FileServerFS(static)
	mux.Handle("GET /", files)
	mux.HandleFunc("GET /api/state", s.handleState)
	mux.HandleFunc("POST /api/reconnect", s.handleReconnect)
	mux.HandleFunc("GET /api/events", s.handleEvents)
	mux.HandleFunc("GET /api/calls", s.handleCalls)
	mux.HandleFunc("POST /api/call", s.handleCall)
	mux.HandleFunc("POST /api/call/cancel", s.handleCancel)
	mux.HandleFunc("POST /api/call/answer", s.handleAnswer)
	mux.HandleFunc("GET /api/resources", s.handleResources)
	mux.HandleFunc("POST /api/resource", s.handleReadResource)
	mux.HandleFunc("GET /api/prompts", s.handlePrompts)
	mux.HandleFunc("POST /api/prompt", s.handleGetPrompt)
	mux.HandleFunc("POST /api/complete", s.handleComplete)
	mux.HandleFunc("GET /api/tasks", s.handleTasks)
	mux.HandleFunc("POST /api/task/cancel", s.handleCancelTask)
	mux.HandleFunc("GET /api/model", s.handleModel)
	mux.HandleFunc("POST /api/search", s.handleSearch)
	mux.HandleFunc("POST /api/view", s.handleView)
	mux.HandleFunc("GET /api/saved", s.handleSaved)
	mux.HandleFunc("POST /api/saved", s.handleSave)
	mux.HandleFunc("POST /api/saved/run", s.handleRunSaved)
	mux.HandleFunc("POST /api/saved/delete", s.handleDeleteSaved)
	mux.HandleFunc("POST /api/saved/import", s.handleImportSaved)
	mux.HandleFunc("GET /api/saved/export.go", s.handleExportGo)
	mux.HandleFunc("GET /api/saved/export.json", s.handleExportSaved)
	mux.HandleFunc("GET /api/trace/export.json", s.handleExportTrace)
	return mux
}

// maxBody bounds a request body.
const maxBody = 4 << 20

// readJSON decodes r's JSON body into v, answering 400 when it cannot.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		http.Error(w, "want Content-Type application/json", http.StatusUnsupportedMediaType)
		return false
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		http.Error(w, "bad request body: "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

// writeJSON answers v as JSON.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	_ = enc.Encode(v)
}

// apiError answers a failure the page shows: the error's text and its
// kind (mcpadapter.ErrorType).
func apiError(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(errorView(err))
}

func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	ctx, cancel := context.WithTimeout(r.Context(), 25*time.Second)
	defer cancel()
	events, lost := s.events.wait(ctx, s.ctx.Done(), after, 2000)
	if events == nil {
		events = []Event{}
	}
	writeJSON(w, map[string]any{"events": events, "lost": lost})
}

func (s *Server) handleExportTrace(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Disposition", `attachment; filename="mcpadapter-trace.json"`)
	var out []map[string]any
	for _, e := range s.events.traces() {
		m := map[string]any{"seq": e.Seq, "time": e.Time, "server": e.Trace.Server, "dir": e.Trace.Dir}
		if e.Trace.Dir == "log" {
			m["level"], m["text"] = e.Trace.Level, e.Trace.Message
		} else {
			m["message"] = json.RawMessage(e.Trace.Message)
			if !json.Valid([]byte(e.Trace.Message)) {
				m["message"] = e.Trace.Message
			}
		}
		out = append(out, m)
	}
	if out == nil {
		out = []map[string]any{}
	}
	writeJSON(w, out)
}

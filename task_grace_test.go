package mcpadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/taskserver"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call to a server that may answer with a task outlives its caller's
// context in the background only: the caller gets its answer at once.
// The tests hold the server's handler until the call has returned, so a
// call that waited for the server could not return in time; the call's
// own timeout (graceCallTimeout) fires well after the caller's context
// ends, so a call that waits ends with *TimeoutError instead of the
// caller's context.Canceled.

// graceCallTimeout is the call's own timeout in these tests: a call
// still waiting then ends with a *TimeoutError.
const graceCallTimeout = 1500 * time.Millisecond

// heldServer is a task server whose tools/call handler blocks until the
// test lets it go (or the request ends), then answers with a task or
// not.
type heldServer struct {
	*taskserver.Server
	entered chan struct{} // a handler started
	release chan struct{} // closed to let the handlers go
	once    sync.Once
	heard   chan struct{} // closed when a held handler's request ended first
	made    chan string   // the ids of the tasks made
}

func newHeldServer(t *testing.T, task, core bool) *heldServer {
	h := &heldServer{entered: make(chan struct{}, 1), release: make(chan struct{}), heard: make(chan struct{}), made: make(chan string, 1)}
	var heard sync.Once
	h.Server = newTaskServer(t, taskserver.Options{PollInterval: 20, Core: core,
		OnCall: func(ctx context.Context, tool string) bool {
			h.entered <- struct{}{}
			select {
			case <-h.release:
				return task
			case <-ctx.Done():
				heard.Do(func() { close(h.heard) })
				return false
			}
		},
		OnCreate: func(_ context.Context, id string) { h.made <- id },
	})
	return h
}

// letGo releases the held handlers. Each test defers it: an HTTP
// server's Close waits for its handlers.
func (h *heldServer) letGo() { h.once.Do(func() { close(h.release) }) }

// callAndCancel calls tool with callCtx in a goroutine, cancels callCtx
// once the server's handler holds the call, and returns the call's error
// once it returns; the handler is still held then.
func callAndCancel(t *testing.T, ctx context.Context, h *heldServer, c *mcpadapter.Client, callCtx context.Context, stop func(), opts *mcpadapter.CallOptions) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(callCtx, "work", json.RawMessage(`{"steps":100,"stepMs":100}`), opts)
		done <- err
	}()
	select {
	case <-h.entered:
	case err := <-done:
		t.Fatalf("the call returned (%v) before the server got it", err)
	case <-ctx.Done():
		t.Fatal("the server never got the call")
	}
	stop()
	select {
	case err := <-done:
		select {
		case <-h.release:
			t.Fatal("the handler was let go before the call returned")
		default:
		}
		return err
	case <-ctx.Done():
		t.Fatal("the call did not return while the server held it")
	}
	return nil
}

// wantCallerCancel checks err is the error of a plain call whose
// caller's context was cancelled: a *TransportError for context.Canceled,
// not the call's timeout, not a task's error.
func wantCallerCancel(t *testing.T, err error) {
	t.Helper()
	var te *mcpadapter.TransportError
	var toe *mcpadapter.TimeoutError
	var tce *mcpadapter.TaskCancelledError
	if !errors.As(err, &te) || !errors.Is(err, context.Canceled) || errors.As(err, &toe) || errors.As(err, &tce) {
		t.Fatalf("want the caller's cancel as a *TransportError (context.Canceled), got %T: %v", err, err)
	}
}

// TestTaskGraceReturnsAtOnce: a call to a 2026-07-28 server that
// declares the Tasks extension, whose caller's context ends while the
// server still works on it, returns at once with the caller's
// context.Canceled, as a call to any other server does (before the call's
// own timeout, while the server still holds the call); the server hears
// of the cancel (notifications/cancelled) once the client stops waiting
// for a task in the background.
func TestTaskGraceReturnsAtOnce(t *testing.T) {
	t.Parallel()
	for name, target := range extTargets() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			h := newHeldServer(t, false, false)
			defer h.letGo()
			c, err := mcpadapter.NewClient(target(t, h.Server), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			callCtx, stop := context.WithCancel(ctx)
			defer stop()
			err = callAndCancel(t, ctx, h, c, callCtx, stop, &mcpadapter.CallOptions{Timeout: graceCallTimeout})
			wantCallerCancel(t, err)
			if name == "inprocess" { // over stateless HTTP no request outlives its POST to be cancelled
				select {
				case <-h.heard:
				case <-ctx.Done():
					t.Fatal("the server never heard the call was abandoned")
				}
			}
			h.letGo()
			if h.Started("work") != 0 || h.Cancels() != 0 {
				t.Errorf("%d tasks made, %d tasks/cancel", h.Started("work"), h.Cancels())
			}
		})
	}
}

// cancelRecorder serves h and records the headers of each tasks/cancel
// request.
type cancelRecorder struct {
	mu      sync.Mutex
	headers []http.Header
}

func (r *cancelRecorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPost {
			body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if bytes.Contains(body, []byte(`"tasks/cancel"`)) {
				r.mu.Lock()
				r.headers = append(r.headers, req.Header.Clone())
				r.mu.Unlock()
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, req)
	})
}

func (r *cancelRecorder) seen() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

// TestTaskGraceCancelsLateTask: the server makes the task only after
// the call whose context ended has returned (with the caller's
// context.Canceled at once); the client still takes the task in the
// background and cancels it with tasks/cancel, sent for the call's
// principal. Both task protocols: a 2026-07-28 server that may make a
// task, and a task-augmented 2025-11-25 call.
func TestTaskGraceCancelsLateTask(t *testing.T) {
	t.Parallel()
	for _, proto := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			core := proto == "2025-11-25"
			h := newHeldServer(t, true, core)
			defer h.letGo()
			var rec cancelRecorder
			var handler http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return h.MCP }, &mcp.StreamableHTTPOptions{Stateless: true})
			if core {
				handler = h.Handler()
			}
			hs := httptest.NewServer(rec.wrap(handler))
			t.Cleanup(hs.Close)
			c, err := mcpadapter.NewClient(hs.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			alice := mcpadapter.WithCallIdentity(ctx, &mcpadapter.CallIdentity{Principal: "alice", Headers: map[string]string{"X-Principal": "alice"}})
			if _, err := c.Tools(alice); err != nil { // 2025-11-25: taskSupport, as alice's connection saw it
				t.Fatal(err)
			}
			callCtx, stop := context.WithCancel(alice)
			defer stop()
			err = callAndCancel(t, ctx, h, c, callCtx, stop, &mcpadapter.CallOptions{Task: mcpadapter.TaskPrefer, Timeout: graceCallTimeout})
			wantCallerCancel(t, err)
			h.letGo() // the server makes the task now
			var task string
			select {
			case task = <-h.made:
			case <-ctx.Done():
				t.Fatal("the server made no task")
			}
			for h.Status(task) != "cancelled" {
				if ctx.Err() != nil {
					t.Fatalf("task %s is %s on the server: never cancelled", task, h.Status(task))
				}
				time.Sleep(10 * time.Millisecond)
			}
			if h.Running() != 0 || h.Cancels() != 1 {
				t.Errorf("%d tasks running, %d tasks/cancel", h.Running(), h.Cancels())
			}
			seen := rec.seen()
			if len(seen) != 1 || seen[0].Get("X-Principal") != "alice" {
				t.Errorf("tasks/cancel requests: %d, want 1 with the call's principal's header (X-Principal: alice)", len(seen))
			}
		})
	}
}

// TestTaskGraceClose: Client.Close while the client still waits in the
// background for the answer to a call whose context ended ends that wait
// and leaves no goroutine behind; no task is made or cancelled.
func TestTaskGraceClose(t *testing.T) {
	// Not parallel: it counts goroutines.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h := newHeldServer(t, true, false)
	defer h.letGo()
	before := runtime.NumGoroutine()
	c, err := mcpadapter.NewClient(h.MCP, nil)
	if err != nil {
		t.Fatal(err)
	}
	callCtx, stop := context.WithCancel(ctx)
	defer stop()
	err = callAndCancel(t, ctx, h, c, callCtx, stop, &mcpadapter.CallOptions{Timeout: graceCallTimeout})
	wantCallerCancel(t, err)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.heard: // the held request ended with the connection
	case <-ctx.Done():
		t.Fatal("the server's handler still holds the call after Close")
	}
	testenv.WaitGoroutines(t, before)
	if h.Started("work") != 0 || h.Cancels() != 0 {
		t.Errorf("%d tasks made, %d tasks/cancel", h.Started("work"), h.Cancels())
	}
}

package mcpadapter_test

// A server that ends a session (404) at chosen moments: a call is sent
// again only when its own POST was answered 404, never when the server
// may have run it, on either path (go-sdk's, or the fast path's own POST).

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
)

// expiringServer is a handshake-era (2025-11-25) MCP server over
// streamable HTTP, written by hand, whose first session ends as its
// test says: answer tells what a tools/call of the tool "transfer" on
// that session gets. Every session after the first answers as a server
// should. It counts the runs of transfer.
type expiringServer struct {
	URL string

	mu       sync.Mutex
	sessions int
	dead     map[string]bool // sessions that answer 404
	runs     int
	// answer, if set, answers a call of transfer on the first session
	// (ran: the tool ran and was counted before).
	answer func(w http.ResponseWriter, id json.RawMessage, kill func())
}

func newExpiringServer(t *testing.T, answer func(w http.ResponseWriter, id json.RawMessage, kill func())) *expiringServer {
	t.Helper()
	s := &expiringServer{dead: map[string]bool{}, answer: answer}
	hs := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(hs.Close)
	s.URL = hs.URL
	return s
}

// Runs returns how many times transfer ran.
func (s *expiringServer) Runs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs
}

// Sessions returns how many sessions were made.
func (s *expiringServer) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions
}

func (s *expiringServer) serve(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	s.mu.Lock()
	dead := s.dead[sid]
	s.mu.Unlock()
	if dead {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	switch r.Method {
	case http.MethodDelete:
		return
	case http.MethodPost:
	default:
		http.Error(w, "no standalone stream", http.StatusMethodNotAllowed)
		return
	}
	b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(b, &req) != nil || len(req.ID) == 0 {
		w.WriteHeader(http.StatusAccepted) // a notification, or a response
		return
	}
	result := ""
	switch req.Method {
	case "initialize":
		s.mu.Lock()
		s.sessions++
		sid = fmt.Sprint("session-", s.sessions)
		s.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", sid)
		result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bank","version":"1"}}`
	case "tools/list":
		result = `{"tools":[{"name":"transfer","inputSchema":{"type":"object"}}]}`
	case "tools/call":
		s.mu.Lock()
		s.runs++
		answer := s.answer
		s.mu.Unlock()
		if sid == "session-1" && answer != nil {
			answer(w, req.ID, func() {
				s.mu.Lock()
				s.dead[sid] = true
				s.mu.Unlock()
			})
			return
		}
		result = `{"content":[{"type":"text","text":"done"}]}`
	case "ping":
		result = `{}`
	}
	w.Header().Set("Content-Type", "application/json")
	if result == "" {
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"error":{"code":-32601,"message":"method not found"}}`)
		return
	}
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+result+`}`)
}

// TestExpiryAfterTheRunNoDoubleRun: the server runs the call, starts its
// event stream (an event id to resume from), ends the stream, and then
// forgets the session, so that go-sdk's resumption gets 404. The call's
// own POST was answered 200: it fails, and is not sent again, on either
// path; the next call goes on a new session.
func TestExpiryAfterTheRunNoDoubleRun(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	s := newExpiringServer(t, func(w http.ResponseWriter, _ json.RawMessage, kill func()) {
		kill()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "id: ev-1\ndata: \n\n")
	})
	c, err := mcpadapter.NewClient(s.URL, &mcpadapter.ClientOptions{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var te *mcpadapter.TransportError
	if res, err := c.CallTool(ctx, "transfer", nil, nil); !errors.As(err, &te) {
		t.Fatalf("a call whose session ended after it ran: %v %+v; want a TransportError", err, res)
	}
	time.Sleep(200 * time.Millisecond) // a retry would have reached the server
	if n := s.Runs(); n != 1 {
		t.Fatalf("the server ran transfer %d times for one call", n)
	}
	if res, err := c.CallTool(ctx, "transfer", nil, nil); err != nil || res.Text() != "done" {
		t.Fatalf("the next call: %v %+v", err, res)
	}
	if n, m := s.Runs(), s.Sessions(); n != 2 || m != 2 {
		t.Errorf("%d runs on %d sessions, want 2 on 2", n, m)
	}
}

// TestExpiryNotFoundAnswers: a 404 to the call's own POST (the server ran
// nothing: it is not counted) is sent again on a new session, once,
// whether the 404 says nothing more or names another session id; a 404
// whose body is a JSON-RPC error is the server's answer to the call and
// is not sent again.
func TestExpiryNotFoundAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		header  string // Mcp-Session-Id of the 404
		body    func(id json.RawMessage) string
		retried bool
	}{
		{"plain", "", nil, true},
		{"another session id", "session-other", nil, true},
		{"JSON-RPC error", "", func(id json.RawMessage) string {
			return `{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32001,"message":"session not found"}}`
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			var s *expiringServer
			s = newExpiringServer(t, func(w http.ResponseWriter, id json.RawMessage, kill func()) {
				s.mu.Lock()
				s.runs-- // not run
				s.mu.Unlock()
				kill()
				if tc.header != "" {
					w.Header().Set("Mcp-Session-Id", tc.header)
				}
				if tc.body == nil {
					http.Error(w, "session not found", http.StatusNotFound)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotFound)
				_, _ = io.WriteString(w, tc.body(id))
			})
			c, err := mcpadapter.NewClient(s.URL, &mcpadapter.ClientOptions{Logger: quietLogger()})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			res, err := c.CallTool(ctx, "transfer", nil, nil)
			if tc.retried {
				if err != nil || res.Text() != "done" {
					t.Fatalf("a call answered 404: %v %+v; want it made on a new session", err, res)
				}
			} else if err == nil && !res.IsError {
				t.Fatalf("a call answered a JSON-RPC error with 404: %+v", res)
			}
			time.Sleep(100 * time.Millisecond)
			want := 0
			if tc.retried {
				want = 1
			}
			if n := s.Runs(); n != want {
				t.Errorf("the server ran transfer %d times, want %d", n, want)
			}
		})
	}
}

// TestExpiryBesideACallInFlight: one call runs on the session (the
// server holds its answer) when another call's POST is answered 404 and
// the session forgotten. The second call is made again on a new session;
// the first is never sent again: on the fast path it gets the answer the
// server then writes on its open stream, and on go-sdk's path go-sdk
// fails it with the connection.
func TestExpiryBesideACallInFlight(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	running, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var s *expiringServer
	s = newExpiringServer(t, func(w http.ResponseWriter, id json.RawMessage, kill func()) {
		first := false
		once.Do(func() { first = true })
		if !first {
			s.mu.Lock()
			s.runs-- // not run
			s.mu.Unlock()
			kill()
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		close(running)
		select {
		case <-release:
		case <-time.After(20 * time.Second):
		}
		_, _ = io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":"+string(id)+",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"held\"}]}}\n\n")
	})
	c, err := mcpadapter.NewClient(s.URL, &mcpadapter.ClientOptions{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	type outcome struct {
		res *mcpadapter.Result
		err error
	}
	held := make(chan outcome, 1)
	go func() {
		res, err := c.CallTool(ctx, "transfer", nil, nil)
		held <- outcome{res, err}
	}()
	select {
	case <-running:
	case <-ctx.Done():
		t.Fatal("the first call never ran")
	}
	if res, err := c.CallTool(ctx, "transfer", nil, nil); err != nil || res.Text() != "done" {
		t.Fatalf("a call answered 404 beside one in flight: %v %+v", err, res)
	}
	close(release)
	var o outcome
	select {
	case o = <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the call in flight never returned")
	}
	if mcpadapter.FastPathBuilt {
		if o.err != nil || o.res.Text() != "held" {
			t.Errorf("the call in flight on its own POST: %v %+v; want the server's answer", o.err, o.res)
		}
	} else if o.err == nil {
		t.Errorf("on go-sdk's path, the call whose connection failed returned %+v", o.res)
	}
	time.Sleep(100 * time.Millisecond)
	if n, m := s.Runs(), s.Sessions(); n != 2 || m != 2 {
		t.Errorf("%d runs on %d sessions, want 2 (one per call) on 2", n, m)
	}
}

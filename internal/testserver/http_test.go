package testserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// headerTransport adds a fixed header to every request.
type headerTransport struct{ key, value string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.key, h.value)
	return http.DefaultTransport.RoundTrip(r)
}

func TestHeaders(t *testing.T) {
	t.Parallel()
	client := &http.Client{Transport: headerTransport{"X-Test-Token", "secret-1"}}
	for _, stateless := range []bool{false, true} {
		name := "stateful"
		var opts []StreamableOption
		if stateless {
			name = "stateless"
			opts = append(opts, Stateless())
		}
		t.Run(name, func(t *testing.T) {
			srv, st := NewWithState(Options{})
			hs := StartStreamable(t, srv, opts...)
			cs := connect(t, &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: client}, nil)
			var seen map[string][]string
			if err := json.Unmarshal([]byte(texts(call(t, cs, "headers", nil))), &seen); err != nil {
				t.Fatal(err)
			}
			if got := http.Header(seen).Get("X-Test-Token"); got != "secret-1" {
				t.Errorf("headers tool saw X-Test-Token=%q (all: %v)", got, seen)
			}
			if got := st.LastHeaders("headers").Get("X-Test-Token"); got != "secret-1" {
				t.Errorf("State.LastHeaders: X-Test-Token=%q", got)
			}
			var calls int
			for _, r := range hs.Requests() {
				if r.RPCMethod == "tools/call" {
					calls++
					if r.Header.Get("X-Test-Token") != "secret-1" || r.Header.Get("Mcp-Protocol-Version") == "" {
						t.Errorf("recorded request header %v", r.Header)
					}
				}
			}
			if calls != 1 {
				t.Errorf("recorded %d tools/call requests, want 1", calls)
			}
		})
	}
}

func TestSSEHeaders(t *testing.T) {
	t.Parallel()
	// go-sdk's SSE transport does not pass HTTP headers to handlers
	// (RequestExtra is nil), so only the HTTPServer sees them.
	client := &http.Client{Transport: headerTransport{"X-Test-Token", "sse-1"}}
	srv, st := NewWithState(Options{})
	hs := StartSSE(t, srv)
	cs := connect(t, &mcp.SSEClientTransport{Endpoint: hs.URL, HTTPClient: client}, nil)
	if got := texts(call(t, cs, "headers", nil)); got != "{}" {
		t.Errorf("SSE headers tool = %s", got)
	}
	if h := st.LastHeaders("headers"); h != nil {
		t.Errorf("SSE: State.LastHeaders = %v, want nil", h)
	}
	var posts int
	for _, r := range hs.Requests() {
		if r.Header.Get("X-Test-Token") != "sse-1" {
			t.Errorf("recorded %s %s without the header", r.Method, r.RPCMethod)
		}
		if r.RPCMethod == "tools/call" {
			posts++
		}
	}
	if posts != 1 {
		t.Errorf("recorded %d tools/call POSTs", posts)
	}
}

func TestExpireSessions(t *testing.T) {
	t.Parallel()
	hs := StartStreamable(t, New(Options{Era: Legacy}))
	cs := connect(t, &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
	call(t, cs, "echo", map[string]any{"text": "before"})
	ids := hs.SessionIDs()
	if len(ids) != 1 || ids[0] != cs.ID() {
		t.Fatalf("session ids %q, client has %q", ids, cs.ID())
	}
	hs.ExpireSessions()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "after"}})
	if !errors.Is(err, mcp.ErrSessionMissing) {
		t.Fatalf("call on expired session: %v, want ErrSessionMissing", err)
	}
	t.Logf("expired-session error: %v", err)

	// A new connection gets a new session.
	cs2 := connect(t, &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
	call(t, cs2, "echo", map[string]any{"text": "new"})
	if cs2.ID() == ids[0] || cs2.ID() == "" {
		t.Errorf("new session id %q", cs2.ID())
	}
}

func TestExpireOneSession(t *testing.T) {
	t.Parallel()
	hs := StartStreamable(t, New(Options{}))
	a := connect(t, &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
	b := connect(t, &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
	hs.ExpireSession(a.ID())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); !errors.Is(err, mcp.ErrSessionMissing) {
		t.Errorf("expired session: %v", err)
	}
	call(t, b, "echo", map[string]any{"text": "still alive"})
}

func TestSessionTimeout(t *testing.T) {
	t.Parallel()
	hs := StartStreamable(t, New(Options{}), SessionTimeout(100*time.Millisecond))
	cs := connect(t, &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
	call(t, cs, "echo", map[string]any{"text": "x"})
	time.Sleep(400 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "y"}})
	if !errors.Is(err, mcp.ErrSessionMissing) {
		t.Fatalf("call after session timeout: %v, want ErrSessionMissing", err)
	}
	t.Logf("timed-out session error: %v", err)
}

func TestSSEExpire(t *testing.T) {
	t.Parallel()
	hs := StartSSE(t, New(Options{}))
	cs := connect(t, &mcp.SSEClientTransport{Endpoint: hs.URL}, nil)
	call(t, cs, "echo", map[string]any{"text": "x"})
	hs.ExpireSessions()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "y"}})
	if err == nil {
		t.Fatal("call on expired SSE session succeeded")
	}
	t.Logf("expired SSE session error: %v (ErrConnectionClosed=%v)", err, errors.Is(err, mcp.ErrConnectionClosed))
}

func TestHTTPCancellation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		opts       []StreamableOption
		wantCancel bool
	}{
		{"stateful", nil, true},
		{"stateless", []StreamableOption{Stateless()}, false},
		{"stateless+propagate", []StreamableOption{Stateless(), PropagateCancellation()}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, st := NewWithState(Options{})
			cs := connect(t, &mcp.StreamableClientTransport{Endpoint: ServeStreamable(t, srv, tt.opts...)}, nil)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 1500}})
			if err == nil {
				t.Fatal("cancelled call succeeded")
			}
			wctx, wcancel := context.WithTimeout(context.Background(), time.Second)
			defer wcancel()
			got := st.Wait(wctx, func(s *State) bool { return s.Cancellations() > 0 }) == nil
			if got != tt.wantCancel {
				t.Errorf("server observed cancellation: %v, want %v", got, tt.wantCancel)
			}
		})
	}
}

func TestStatelessRecordsNoSessions(t *testing.T) {
	t.Parallel()
	hs := StartStreamable(t, New(Options{}), Stateless())
	cs := connect(t, &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
	call(t, cs, "echo", map[string]any{"text": "x"})
	hs.ExpireSessions() // no sessions: no effect
	call(t, cs, "echo", map[string]any{"text": "y"})
	for _, r := range hs.Requests() {
		if strings.HasPrefix(r.RPCMethod, "tools/") && r.Header.Get("Mcp-Protocol-Version") != ModernVersion {
			t.Errorf("%s carried protocol version %q", r.RPCMethod, r.Header.Get("Mcp-Protocol-Version"))
		}
	}
}

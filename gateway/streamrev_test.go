//lint:file-ignore SA1019 logging lives in the handshake era, which these clients and servers speak too

package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// plainWriter is a middleware's ResponseWriter that lets nothing but
// Header, Write and WriteHeader through: no Flush, no Unwrap (a status
// recorder written the short way).
type plainWriter struct{ w http.ResponseWriter }

func (p plainWriter) Header() http.Header         { return p.w.Header() }
func (p plainWriter) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p plainWriter) WriteHeader(code int)        { p.w.WriteHeader(code) }

// startWrapped starts g behind a middleware whose ResponseWriter cannot
// flush (plainWriter), on loopback.
func startWrapped(t *testing.T, g *Gateway) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.ServeHTTP(plainWriter{w}, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// newStreamGateway makes (unstarted on HTTP) a gateway over servers, with
// the fast paths or without them.
func newStreamGateway(t *testing.T, servers []Server, slowOnly bool) *Gateway {
	t.Helper()
	g, err := New(servers, &Options{Logger: quietLogger(t), slowPathOnly: slowOnly})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	if err := g.Start(testCtx(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestStreamedFastWriterWithoutFlush: a gateway mounted behind a
// middleware whose ResponseWriter cannot flush (the client gets the
// response when the handler returns) gives a client that asked for a
// call's progress and log messages all of them, on the fast paths as on
// go-sdk's handler, which flushes each event at best: a flush that is
// not supported does not lose the stream.
func TestStreamedFastWriterWithoutFlush(t *testing.T) {
	lg := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "lg", Era: testserver.Legacy, Notify: true}))
	servers := []Server{{Name: "lg", Target: lg.URL}}
	fast, slow := newStreamGateway(t, servers, false), newStreamGateway(t, servers, true)
	fastURL, slowURL := startWrapped(t, fast), startWrapped(t, slow)

	const args = `{"text":"w","log":true,"logs":3,"progress":true,"progresses":3}`
	t.Run("2026-07-28", func(t *testing.T) {
		c := streamedCall("1", "notify", args, `"progressToken":"tok","io.modelcontextprotocol/logLevel":"info"`)
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(c.body))
		for k, v := range fastHeaders("notify") {
			req.Header.Set(k, v)
		}
		if fast.fastRequestOf(req) == nil {
			t.Fatal("the call does not take the fast path")
		}
		c.header = map[string]string{"Mcp-Name": "notify"}
		got, want := sendCase(t, fastURL, c), sendCase(t, slowURL, c)
		if n := strings.Count(want.Raw, `"method":"notifications/`); n != 6 {
			t.Errorf("go-sdk's handler wrote %d notifications, want 6:\n%s", n, want.Raw)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("fast path answered\n%s\ngo-sdk answered\n%s", dump(got), dump(want))
		}
	})
	t.Run("session", func(t *testing.T) {
		fs, ss := rawInit(t, fastURL, `{}`), rawInit(t, slowURL, `{}`)
		for _, s := range []*rawSession{fs, ss} {
			resp := s.post(testCtx(t, 10*time.Second), `{"jsonrpc":"2.0","id":"lv","method":"logging/setLevel","params":{"level":"info"}}`)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		waitSDKDone(t, fast, fast.live.get(fs.id, ""))
		c := streamedCall("2", "notify", args, `"progressToken":"tok"`)
		fbody, fheader := sessionCase(c, fs.id)
		sbody, sheader := sessionCase(c, ss.id)
		before := fast.sessionFast.Load()
		got, want := sendSession(t, fastURL, fbody, fheader), sendSession(t, slowURL, sbody, sheader)
		if n := fast.sessionFast.Load() - before; n != 1 {
			t.Errorf("%d calls took the session fast path, want 1", n)
		}
		if n := strings.Count(want.Raw, `"method":"notifications/`); n != 6 {
			t.Errorf("go-sdk's handler wrote %d notifications, want 6:\n%s", n, want.Raw)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("fast path answered\n%s\ngo-sdk answered\n%s", dump(got), dump(want))
		}
	})
}

// addBadParamsTool registers on srv the tool bad_params: it sends two
// progress reports (with the call's progress token) and a log message,
// then answers with a JSON-RPC error of code InvalidParams, which a
// 2026-07-28 client gets with an HTTP status of its own (400).
func addBadParamsTool(srv *mcp.Server) {
	srv.AddTool(&mcp.Tool{Name: "bad_params", Description: "Report progress, then refuse the call's params.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				for i := range 2 {
					if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i + 1), Total: 2, Message: "bp"}); err != nil {
						return nil, err
					}
				}
			}
			if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "bp log"}); err != nil {
				return nil, err
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the server refuses these params"}
		})
}

// TestFastPathErrorStatusAfterNotifications: a 2026-07-28 call whose
// server reports progress and logs, then answers with an error that has
// an HTTP status of its own (InvalidParams: 400) gets, on the fast path,
// what go-sdk's handler writes: the notifications already began the
// stream (status 200), and the error follows them.
func TestFastPathErrorStatusAfterNotifications(t *testing.T) {
	// A handshake-era server: its error comes whole on its connection (a
	// 2026-07-28 server's go-sdk handler would write it, status too
	// late, after its own events, which its client cannot read).
	srv := testserver.New(testserver.Options{Name: "bp", Era: testserver.Legacy})
	addBadParamsTool(srv)
	servers := []Server{{Name: "bp", Target: testserver.StartStreamable(t, srv).URL}}
	fast, fastURL := startGateway(t, servers, nil)
	_, slowURL := startGateway(t, servers, &Options{slowPathOnly: true})
	cases := []struct{ name, meta, wantStatus, wantNotes string }{
		{"progress", `"progressToken":"tok"`, "200", "2"},
		{"progress and log", `"progressToken":"tok","io.modelcontextprotocol/logLevel":"debug"`, "200", "3"},
		{"log", `"io.modelcontextprotocol/logLevel":"info"`, "200", "1"},
		{"neither", `"x":1`, "400", "0"},
	}
	for _, cs := range cases {
		t.Run(cs.name, func(t *testing.T) {
			c := streamedCall("9", "bad_params", `{}`, cs.meta)
			c.header = map[string]string{"Mcp-Name": "bad_params"}
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(c.body))
			for k, v := range fastHeaders("bad_params") {
				req.Header.Set(k, v)
			}
			if fast.fastRequestOf(req) == nil {
				t.Fatal("the call does not take the fast path")
			}
			got, want := sendCase(t, fastURL, c), sendCase(t, slowURL, c)
			notes := strings.Count(want.Raw, `"method":"notifications/`)
			if fmt.Sprint(want.Status) != cs.wantStatus || fmt.Sprint(notes) != cs.wantNotes || !strings.Contains(want.Raw, `"code":-32602,"message":"the server refuses these params"`) {
				t.Errorf("go-sdk's handler answered %d with %d notifications, want %s with %s, and the server's error:\n%s", want.Status, notes, cs.wantStatus, cs.wantNotes, want.Raw)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("fast path answered\n%s\ngo-sdk answered\n%s", dump(got), dump(want))
			}
		})
	}
}

// hostileTokenCases are calls whose progress tokens go-sdk reads in ways
// a copy of the bytes would not: numbers it decodes as float64 and
// writes back otherwise, objects whose members it sorts, escapes.
func hostileTokenCases() []fastCase {
	toks := map[string]string{
		"exponent":      `1E2`,
		"fraction":      `1.50`,
		"minus zero":    `-0`,
		"big exponent":  `1e21`,
		"past float":    `12345678901234567890`,
		"bool":          `true`,
		"object":        `{"b":1,"a":[2,{"d":null,"c":"\u003c"}]}`,
		"array":         `[3,"x"]`,
		"escaped":       `"\u2028\u003c\ud83d\ude00\/"`,
		"empty string":  `""`,
		"tiny":          `5e-324`,
		"negative":      `-17`,
		"escaped token": `"t\u006fk"`,
	}
	var cs []fastCase
	for name, tok := range toks {
		c := streamedCall("500", "lg_notify", `{"text":"ht","log":true,"progress":true,"progresses":2}`, `"progressToken":`+tok+`,"io.modelcontextprotocol/logLevel":"info"`)
		c.name = "progress token " + name
		cs = append(cs, c)
	}
	return cs
}

// TestStreamedFastHostileTokens: progress tokens a hostile client writes
// as go-sdk would not come back on the fast paths' streams as go-sdk's
// handler writes them (a 2026-07-28 request and a handshake-era
// session's).
func TestStreamedFastHostileTokens(t *testing.T) {
	fast, _, fastURL, slowURL := startDiffGateways(t, false)
	for _, c := range hostileTokenCases() {
		t.Run("2026-07-28/"+c.name, func(t *testing.T) {
			got, want := sendCase(t, fastURL, c), sendCase(t, slowURL, c)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("fast path answered\n%s\ngo-sdk answered\n%s", dump(got), dump(want))
			}
		})
	}
	fs, ss := rawInit(t, fastURL, `{}`), rawInit(t, slowURL, `{}`)
	for _, s := range []*rawSession{fs, ss} {
		resp := s.post(testCtx(t, 10*time.Second), `{"jsonrpc":"2.0","id":"lv","method":"logging/setLevel","params":{"level":"info"}}`)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	waitSDKDone(t, fast, fast.live.get(fs.id, ""))
	for _, c := range hostileTokenCases() {
		t.Run("session/"+c.name, func(t *testing.T) {
			c.body = logLevelRE.ReplaceAllString(c.body, "")
			fbody, fheader := sessionCase(c, fs.id)
			sbody, sheader := sessionCase(c, ss.id)
			before := fast.sessionFast.Load()
			got, want := sendSession(t, fastURL, fbody, fheader), sendSession(t, slowURL, sbody, sheader)
			fastTaken := fast.sessionFast.Load() - before
			if !reflect.DeepEqual(got, want) {
				t.Errorf("fast path (%d taken) answered\n%s\ngo-sdk answered\n%s", fastTaken, dump(got), dump(want))
			}
		})
	}
}

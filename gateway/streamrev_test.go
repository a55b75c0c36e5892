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
	"sync"
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
// an HTTP status of its own (InvalidParams: 400) gets the same on the
// fast path and on go-sdk's handler: when the notifications already began
// the stream (status 200), the error follows them as an SSE event, which
// a client reads (go-sdk's transport alone writes its JSON bare, which no
// client reads: sseErrorWriter frames it); otherwise a JSON body with
// status 400.
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
			if notes > 0 && !strings.HasSuffix(want.Raw, "\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":-32602,\"message\":\"the server refuses these params\"}}\n\n") {
				t.Errorf("the error after the notifications is not an SSE event of its own:\n%q", want.Raw)
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
	levels := map[string]string{
		"escaped key":          `"io.modelcontextprotocol\/log\u004cevel":"info"`,
		"escaped value":        `"io.modelcontextprotocol/logLevel":"\u0069nfo"`,
		"above the messages":   `"io.modelcontextprotocol/logLevel":"warning"`,
		"upper case":           `"io.modelcontextprotocol/logLevel":"INFO"`,
		"empty":                `"io.modelcontextprotocol/logLevel":""`,
		"null":                 `"io.modelcontextprotocol/logLevel":null`,
		"object":               `"io.modelcontextprotocol/logLevel":{"level":"info"}`,
		"array":                `"io.modelcontextprotocol/logLevel":["info"]`,
		"twice":                `"io.modelcontextprotocol/logLevel":"error","io.modelcontextprotocol/logLevel":"debug"`,
		"key with upper case":  `"io.modelcontextprotocol/LogLevel":"info"`,
		"invalid utf-8 escape": `"io.modelcontextprotocol/logLevel":"\ud800"`,
	}
	for name, meta := range levels {
		c := streamedCall("501", "lg_notify", `{"text":"lv","log":true,"logs":2}`, meta)
		c.name = "log level " + name
		cs = append(cs, c)
	}
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
// session's); a 2026-07-28 request's log level, however written, is read
// as go-sdk reads it.
func TestStreamedFastHostileTokens(t *testing.T) {
	fast, _, fastURL, slowURL := startDiffGateways(t, false)
	for _, c := range hostileTokenCases() {
		t.Run("2026-07-28/"+c.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(c.body))
			for k, v := range fastHeaders("lg_notify") {
				req.Header.Set(k, v)
			}
			// A _meta naming a member twice is go-sdk's to read.
			if taken, want := fast.fastRequestOf(req) != nil, c.name != "log level twice"; taken != want {
				t.Errorf("fast path taken: %v, want %v", taken, want)
			}
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
		if !strings.HasPrefix(c.name, "progress token") {
			continue // a session's log level is its logging/setLevel
		}
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

// streamEvents returns the JSON-RPC messages of an SSE body, in order.
func streamEvents(body string) []map[string]any {
	var msgs []map[string]any
	for _, line := range strings.Split(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var m map[string]any
		if json.Unmarshal([]byte(data), &m) == nil {
			msgs = append(msgs, m)
		}
	}
	return msgs
}

// checkOwnStream reports what is wrong with body, the stream of a call
// whose text is text and that asked for logs log messages and progresses
// progress reports, each carrying its text, before its answer: a
// notification of another call, one after the answer, one missing (logs
// < 0: log messages may be missing).
func checkOwnStream(body, text string, logs, progresses int) string {
	msgs := streamEvents(body)
	var gotLogs, gotProgress int
	answered := false
	for _, m := range msgs {
		params, _ := m["params"].(map[string]any)
		switch m["method"] {
		case "notifications/message":
			if answered {
				return "a log message after the answer: " + body
			}
			if d, _ := params["data"].(string); !strings.HasPrefix(d, text+" ") {
				return "another call's log message " + d + ": " + body
			}
			gotLogs++
		case "notifications/progress":
			if answered {
				return "a progress report after the answer: " + body
			}
			if d, _ := params["message"].(string); !strings.HasPrefix(d, text+" ") || params["progressToken"] != "tok" {
				return "another call's progress report " + d + ": " + body
			}
			gotProgress++
		case nil:
			answered = true
			if !strings.Contains(body, `"text":"`+text+`"`) {
				return "another answer: " + body
			}
		}
	}
	if !answered || (logs >= 0 && gotLogs != logs) || gotProgress != progresses {
		return fmt.Sprintf("answered %v, %d of %d log messages, %d of %d progress reports: %s", answered, gotLogs, logs, gotProgress, progresses, body)
	}
	return ""
}

// TestStreamedFastCrossing: many clients call at once through one
// gateway over one handshake-era server connection (streamable HTTP and
// stdio), every call with the same JSON-RPC id and the same progress
// token, asking for log messages and progress reports: handshake-era
// sessions (the session fast path) and 2026-07-28 clients (the fast
// path). Each call's stream carries its own notifications, before its
// answer, and no other call's; all of them (over stdio, a log message
// sent while calls of other clients are in flight belongs to no one).
func TestStreamedFastCrossing(t *testing.T) {
	const sessions, modern, rounds, logs, progresses = 6, 6, 4, 3, 3
	for name, srv := range notifyBackends(t) {
		t.Run(name, func(t *testing.T) {
			wantLogs := logs
			if name == "stdio" {
				wantLogs = -1
			}
			g, url := startGateway(t, []Server{srv}, nil)
			ctx := testCtx(t, 120*time.Second)
			raws := make([]*rawSession, sessions)
			for i := range raws {
				raws[i] = rawInit(t, url, `{}`)
				resp := raws[i].post(ctx, `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}}`)
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				waitSDKDone(t, g, g.live.get(raws[i].id, ""))
			}
			before := g.sessionFast.Load()
			args := func(text string) string {
				return fmt.Sprintf(`{"text":%q,"log":true,"logs":%d,"progress":true,"progresses":%d}`, text, logs, progresses)
			}
			problems := make(chan string, (sessions+modern)*rounds)
			var wg sync.WaitGroup
			for i, s := range raws {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := range rounds {
						text := fmt.Sprintf("s%02dr%d", i, r)
						body, _ := sessionCase(streamedCall("1", "notify", args(text), `"progressToken":"tok"`), s.id)
						resp := s.post(ctx, body)
						b, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						if p := checkOwnStream(string(b), text, wantLogs, progresses); p != "" {
							problems <- "session " + text + ": " + p
						}
					}
				}()
			}
			for i := range modern {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := range rounds {
						text := fmt.Sprintf("m%02dr%d", i, r)
						c := streamedCall("1", "notify", args(text), `"progressToken":"tok","io.modelcontextprotocol/logLevel":"info"`)
						c.header = map[string]string{"Mcp-Name": "notify"}
						a := sendCase(t, url, c)
						if p := checkOwnStream(a.Raw, text, wantLogs, progresses); p != "" {
							problems <- "2026-07-28 " + text + ": " + p
						}
					}
				}()
			}
			wg.Wait()
			close(problems)
			for p := range problems {
				t.Error(p)
			}
			if n := g.sessionFast.Load() - before; n != sessions*rounds {
				t.Errorf("%d of %d session calls took the session fast path", n, sessions*rounds)
			}
		})
	}
}

// firstEvent reads body until its first SSE event has come whole.
func firstEvent(body io.Reader) error {
	var seen []byte
	buf := make([]byte, 512)
	for !strings.Contains(string(seen), "\n\n") {
		n, err := body.Read(buf)
		seen = append(seen, buf[:n]...)
		if err != nil {
			return err
		}
	}
	return nil
}

// TestStreamedFastDisruptions: while the server floods calls on the fast
// paths with progress reports and log messages, their clients disrupt
// them in every way a client can: a handshake-era session ends (DELETE),
// cancels the call (notifications/cancelled) or drops the connection
// mid-stream; a 2026-07-28 client drops its connection mid-stream;
// other clients read on. Then the gateway closes while clients that
// never read hold calls whose notifications fill their connections: it
// closes within the write cut it gives them (closeWriteGrace and
// closeWriteSlack). Under -race: no write to a response after its
// handler returned, no data race.
func TestStreamedFastDisruptions(t *testing.T) {
	srv := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy, Notify: true}))
	g, url := startGateway(t, []Server{{Name: "up", Target: srv.URL}}, nil)
	ctx := testCtx(t, 120*time.Second)
	const args = `{"text":"f","log":true,"logs":200,"progress":true,"progresses":400,"pad":2000}`
	// More than the sockets between the gateway and a client hold.
	const unreadArgs = `{"text":"u","log":true,"logs":200,"progress":true,"progresses":1000,"pad":30000}`
	session := func() *rawSession {
		s := rawInit(t, url, `{}`)
		resp := s.post(ctx, `{"jsonrpc":"2.0","id":"lv","method":"logging/setLevel","params":{"level":"info"}}`)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		waitSDKDone(t, g, g.live.get(s.id, ""))
		return s
	}
	sessionCall := func(s *rawSession, id string, cctx context.Context) (*http.Response, error) {
		args := args
		if id == `"u"` {
			args = unreadArgs
		}
		body, header := sessionCase(streamedCall(id, "notify", args, `"progressToken":"tok"`), s.id)
		req, _ := http.NewRequestWithContext(cctx, http.MethodPost, url, strings.NewReader(body))
		for k, v := range fastHeaders("") {
			req.Header.Set(k, v)
		}
		setHeaders(req.Header, header)
		return http.DefaultClient.Do(req)
	}
	modernCall := func(cctx context.Context, args string) (*http.Response, error) {
		c := streamedCall("1", "notify", args, `"progressToken":"tok","io.modelcontextprotocol/logLevel":"info"`)
		req, _ := http.NewRequestWithContext(cctx, http.MethodPost, url, strings.NewReader(c.body))
		for k, v := range fastHeaders("notify") {
			req.Header.Set(k, v)
		}
		return http.DefaultClient.Do(req)
	}
	before := g.sessionFast.Load()
	var wg sync.WaitGroup
	for round := range 3 {
		for kind := range 5 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cctx, cancel := context.WithCancel(ctx)
				defer cancel()
				var s *rawSession
				var resp *http.Response
				var err error
				if kind == 3 {
					resp, err = modernCall(cctx, args)
				} else {
					s = session()
					resp, err = sessionCall(s, fmt.Sprintf(`"c%d"`, round), cctx)
				}
				if err != nil {
					t.Errorf("kind %d: %v", kind, err)
					return
				}
				defer resp.Body.Close()
				if err := firstEvent(resp.Body); err != nil {
					t.Errorf("kind %d: no first event: %v", kind, err)
					return
				}
				switch kind {
				case 0:
					_ = s.end()
				case 1:
					r := s.post(ctx, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c%d"}}`, round))
					r.Body.Close()
				case 2, 3:
					cancel()
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
			}()
		}
	}
	wg.Wait()
	if g.sessionFast.Load() == before {
		t.Error("no call took the session fast path")
	}

	// Clients that never read, then Close.
	const unread = 4
	for i := range unread {
		var resp *http.Response
		var err error
		if i%2 == 0 {
			resp, err = sessionCall(session(), `"u"`, ctx)
		} else {
			resp, err = modernCall(ctx, unreadArgs)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
	}
	waitUntil(t, "the unread calls' relays held up", func() bool {
		_, writers, total := relayCounts(g)
		return writers >= unread && total >= unread*(4<<20) // the writers blocked, their queues filling

	})
	start := time.Now()
	closed := make(chan struct{})
	go func() {
		_ = g.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return in 30 s with clients that do not read")
	}
	took := time.Since(start)
	t.Logf("Close took %v with %d clients that do not read", took.Round(time.Millisecond), unread)
	if _, writers, _ := relayCounts(g); writers != 0 {
		t.Errorf("%d relay writers still run after Close", writers)
	}
}

//lint:file-ignore SA1019 logging lives in the handshake era, which these clients and servers speak too

package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// streamedCall is a call of tool (nt_notify, lg_notify: a server that
// sends progress reports and log messages, then answers) with arguments
// args and meta (members, comma-separated) in its _meta besides the
// client's.
func streamedCall(id, tool, args, meta string) fastCase {
	body := strings.Replace(fastCall(id, `"`+tool+`"`, args), `"_meta":{`, `"_meta":{`+meta+`,`, 1)
	return fastCase{name: "", header: map[string]string{"Mcp-Name": tool}, body: body, fast: true}
}

// streamedFastCases are calls whose client asked for their progress (a
// progress token) or log messages (a log level): the server's progress
// reports and log messages go on the request's stream before the answer.
func streamedFastCases() []fastCase {
	named := func(name, want string, c fastCase) fastCase {
		c.name, c.want = name, want
		return c
	}
	const tok = `"progressToken":"tok"`
	return []fastCase{
		named("progress reports", `"method":"notifications/progress"`,
			streamedCall("400", "nt_notify", `{"text":"p","progress":true,"progresses":3}`, tok)),
		named("progress reports of a handshake-era server", `"progressToken":7`,
			streamedCall("401", "lg_notify", `{"text":"q","progress":true,"progresses":2}`, `"progressToken":7`)),
		named("progress reports large", `"progress":2`,
			streamedCall("402", "nt_notify", `{"text":"big","progress":true,"progresses":2,"pad":20000}`, tok)),
		named("progress token with html", `"progressToken":"\u003ca\u003e\u0026"`,
			streamedCall("403", "lg_notify", `{"text":"<b>&\u2028","progress":true}`, `"progressToken":"<a>&"`)),
		named("progress token null", `"text":"n"`,
			streamedCall("404", "lg_notify", `{"text":"n","progress":true}`, `"progressToken":null`)),
		named("progress token of a tool that sends none", `"text":"e"`,
			streamedCall("405", "up_echo", `{"text":"e"}`, tok)),
		named("log and progress", `"method":"notifications/message"`,
			streamedCall("406", "lg_notify", `{"text":"l","log":true,"progress":true}`, tok+`,"io.modelcontextprotocol/logLevel":"info"`)),
		named("log messages of a 2026-07-28 server", `"data":"m 2"`,
			streamedCall("407", "nt_notify", `{"text":"m","log":true,"logs":3}`, `"io.modelcontextprotocol/logLevel":"debug"`)),
		named("log level above the messages", `"text":"hi"`,
			streamedCall("408", "lg_notify", `{"text":"hi","log":true,"progress":true}`, tok+`,"io.modelcontextprotocol/logLevel":"error"`)),
		named("log level not a string", `"text":"ns"`,
			streamedCall("409", "lg_notify", `{"text":"ns","log":true}`, `"io.modelcontextprotocol/logLevel":5`)),
		named("log level unknown", `"text":"u"`,
			streamedCall("410", "lg_notify", `{"text":"u","log":true}`, `"io.modelcontextprotocol/logLevel":"loud"`)),
		named("log messages with meta", `"pad":"xxx"`,
			streamedCall("411", "lg_notify", `{"text":"mm","log":true,"logs":2,"metaPad":3}`, `"io.modelcontextprotocol/logLevel":"info"`)),
		func() fastCase {
			// Not plain: go-sdk's session made for the request runs it.
			c := named("progress of a call that is not plain", `"progress":2`,
				streamedCall("413", "nt_notify", `{"text":"np","progress":true,"progresses":2,"log":true}`, tok+`,"io.modelcontextprotocol/logLevel":"info"`))
			c.body = strings.Replace(c.body, `"arguments"`, `"inputResponses":null,"arguments"`, 1)
			c.session = true
			return c
		}(),
		func() fastCase {
			// Not lean (capabilities naming a member twice): go-sdk's
			// session reads the whole _meta.
			c := named("progress of a call not lean", `"data":"nc"`,
				streamedCall("414", "lg_notify", `{"text":"nc","progress":true,"log":true}`, tok+`,"io.modelcontextprotocol/logLevel":"info"`))
			c.body = strings.Replace(c.body, `"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}`, `"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"elicitation":{}}`, 1)
			c.session = true
			return c
		}(),
		func() fastCase {
			c := named("progress of an unknown tool", `unknown tool`, streamedCall("412", "nope", `{}`, tok))
			c.session = true
			return c
		}(),
	}
}

// TestStreamedFastRealClients: go-sdk clients of both eras that asked
// for a call's progress (a progress token) and log messages (a log level:
// logging/setLevel, or the request's _meta at 2026-07-28) get the
// progress reports and log messages a go-sdk server sends, in the order
// it sent them, the call answered on the fast
// path (the session fast path for a handshake-era client). A
// handshake-era server and a 2026-07-28 one.
func TestStreamedFastRealClients(t *testing.T) {
	lg := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "lg", Era: testserver.Legacy, Notify: true}))
	nt := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "nt", Era: testserver.Modern, Notify: true}), testserver.Stateless())
	// modernFast counts the 2026-07-28 calls the fast path's rule takes.
	g, url, modernFast := startCountingGateway(t, []Server{{Name: "lg", Target: lg.URL}, {Name: "nt", Target: nt.URL}}, false)
	for _, v := range []string{"2025-06-18", v1125, v0728} {
		for _, tool := range []string{"lg_notify", "nt_notify"} {
			t.Run(v+"/"+tool, func(t *testing.T) {
				ctx := testCtx(t, 30*time.Second)
				var mu sync.Mutex
				var heard []string
				cs := connect(t, url, v, &mcp.ClientOptions{
					ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
						mu.Lock()
						heard = append(heard, fmt.Sprintf("progress %v %v/%v %s", r.Params.ProgressToken, r.Params.Progress, r.Params.Total, r.Params.Message))
						mu.Unlock()
					},
					LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
						mu.Lock()
						heard = append(heard, fmt.Sprintf("log %s %v", r.Params.Level, r.Params.Data))
						mu.Unlock()
					},
				})
				p := &mcp.CallToolParams{Name: tool, Arguments: testserver.NotifyIn{Text: "t", Log: true, Logs: 2, Progress: true, Progresses: 3}}
				p.SetProgressToken("tok")
				before, beforeModern := g.sessionFast.Load(), modernFast.Load()
				if v == v0728 {
					p.Meta[mcp.MetaKeyLogLevel] = "info"
				} else {
					waitFor(t, "the session's standalone stream", func() bool { return g.live.streaming(liveOf(t, g, cs)) })
					if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
						t.Fatal(err)
					}
					waitSDKDone(t, g, liveOf(t, g, cs))
				}
				res, err := cs.CallTool(ctx, p)
				if err != nil || texts(res) != "t" {
					t.Fatalf("call: %v %q", err, texts(res))
				}
				// go-sdk's client hands notifications to its handlers on a
				// goroutine of their own: they may run after the call
				// returned. (The differential tests hold their place on
				// the stream, before the answer.)
				want := strings.Join([]string{"log info t 0", "log info t 1", "progress tok 1/3 t 0", "progress tok 2/3 t 1", "progress tok 3/3 t 2"}, "\n")
				heardAll := func() string {
					mu.Lock()
					defer mu.Unlock()
					return strings.Join(heard, "\n")
				}
				for deadline := time.Now().Add(10 * time.Second); len(heardAll()) < len(want) && time.Now().Before(deadline); {
					time.Sleep(5 * time.Millisecond)
				}
				if got := heardAll(); got != want {
					t.Errorf("the client heard\n%s\nwant\n%s", got, want)
				}
				if v == v0728 {
					if n := modernFast.Load() - beforeModern; n != 1 {
						t.Errorf("%d of 1 calls took the fast path", n)
					}
				} else if n := g.sessionFast.Load() - before; n != 1 {
					t.Errorf("%d of 1 calls took the session fast path", n)
				}
			})
		}
	}
}

// TestSessionFastSetLevelMidCall: a session that asks for log messages
// (logging/setLevel) while a call of it runs on the session fast path
// gets the call's log messages on the call's stream, before its answer,
// and not on its session's standalone stream.
func TestSessionFastSetLevelMidCall(t *testing.T) {
	srv := testserver.New(testserver.Options{Name: "gate", Era: testserver.Legacy})
	entered, release := make(chan struct{}, 1), make(chan struct{})
	srv.AddTool(&mcp.Tool{Name: "gate", Description: "Wait to be let go, then log a message and answer.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			entered <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "mid-call"}); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	g, url := startGateway(t, []Server{{Name: "gate", Target: testserver.StartStreamable(t, srv).URL}}, nil)
	s := rawInit(t, url, `{}`)
	ctx := testCtx(t, 30*time.Second)

	// The session's standalone stream, read throughout.
	var standalone lockedBuffer
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", s.id)
	req.Header.Set("Mcp-Protocol-Version", v1125)
	get, err := http.DefaultClient.Do(req)
	if err != nil || get.StatusCode != http.StatusOK {
		t.Fatalf("the standalone stream: %v %v", err, get)
	}
	go func() { _, _ = io.Copy(&standalone, get.Body) }()
	t.Cleanup(func() { get.Body.Close() })
	waitFor(t, "the session's standalone stream", func() bool {
		ls := g.live.get(s.id, "")
		return ls != nil && g.live.streaming(ls)
	})

	call := make(chan string, 1)
	go func() {
		resp := s.post(ctx, `{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"gate","arguments":{}}}`)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		call <- string(b)
	}()
	<-entered
	if !g.live.calling(g.live.get(s.id, "")) {
		t.Error("the call is not on the session fast path")
	}
	resp := s.post(ctx, `{"jsonrpc":"2.0","id":"lv","method":"logging/setLevel","params":{"level":"info"}}`)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	close(release)
	body := <-call
	logAt, answerAt := strings.Index(body, `"method":"notifications/message"`), strings.Index(body, `"result"`)
	if logAt < 0 || !strings.Contains(body, `"data":"mid-call"`) || answerAt < logAt {
		t.Errorf("the call's stream carried\n%s\nwant its log message, then its answer", body)
	}
	if strings.Contains(standalone.String(), "mid-call") {
		t.Errorf("the call's log message went on the session's standalone stream:\n%s", standalone.String())
	}
}

// waitSDKDone waits until go-sdk's handler has no request of ls (its POST
// answered, its handler returned): a call of ls may then take the session
// fast path.
func waitSDKDone(t *testing.T, g *Gateway, ls *liveSession) {
	t.Helper()
	waitFor(t, "go-sdk's handler done with the session's requests", func() bool {
		g.live.mu.Lock()
		defer g.live.mu.Unlock()
		return ls.sdk == 0
	})
}

// TestSessionFastProgressFloodUnread: a hostile server floods a call with
// progress reports (64 MiB together: more than the sockets to the client
// and than the call's relay hold) while the call's client, whose call is
// on the session fast path, never reads the call's stream. What the
// gateway holds of them stays within its relay's bound, the newest
// replacing the oldest; meanwhile other clients are served over the same
// server connection (a handshake-era session that reads, its log messages
// and progress reports before its answers, on the session fast path too;
// a 2026-07-28 client); the flooded call ends when its client goes away,
// and its relay with it. A go-sdk server over stdio and over streamable
// HTTP.
func TestSessionFastProgressFloodUnread(t *testing.T) {
	const reports, pad = 1024, 64 << 10
	for name, srv := range notifyBackends(t) {
		t.Run(name, func(t *testing.T) {
			g, url, _ := startRelayGateway(t, srv)
			ctx := testCtx(t, 120*time.Second)
			a := connectUnread(t, ctx, g, url, "alice")
			waitSDKDone(t, g, liveOf(t, g, a.cs))
			p := &mcp.CallToolParams{Name: "notify", Arguments: testserver.NotifyIn{Text: "alice", Progress: true, Progresses: reports, Pad: pad}}
			p.SetProgressToken("alice")
			a.call(t, g, p) // the server sent every report and answered
			if !g.live.calling(liveOf(t, g, a.cs)) {
				t.Error("alice's call is not on the session fast path")
			}
			held, queued := relayHeld(g, a.ss)
			g.relays.mu.Lock()
			var dropped int
			if r := g.relays.by[a.ss]; r != nil {
				dropped = r.droppedProgress
			}
			total := g.relays.total
			g.relays.mu.Unlock()
			t.Logf("%s: alice's relay holds %d bytes in %d reports (%d dropped or replaced) of the %d MiB her server sent", name, held, queued, dropped, reports*pad>>20)
			if held > relayBound || total > relayBound {
				t.Errorf("alice's relay holds %d bytes (all relays %d), past its bound of %d", held, total, relayBound)
			}
			if dropped == 0 {
				t.Error("alice's relay dropped no progress report: it held all of them")
			}

			// Bob reads; his calls go on beside alice's.
			tap := &wireTap{base: http.DefaultTransport, read: map[string]*bytes.Buffer{}}
			bob := connectReader(t, ctx, url, "bob", tap, nil)
			waitSDKDone(t, g, liveOf(t, g, bob))
			before := g.sessionFast.Load()
			for i := range 3 {
				text := fmt.Sprintf("bob-%d", i)
				p := &mcp.CallToolParams{Name: "notify", Arguments: testserver.NotifyIn{Text: text, Log: true, Logs: 3, Progress: true, Progresses: 2}}
				p.SetProgressToken(text)
				res, err := bob.CallTool(ctx, p)
				if err != nil || texts(res) != text {
					t.Fatalf("bob's call %d: %v %q", i, err, texts(res))
				}
				stream := tap.stream(text)
				if problem := logsBeforeAnswer(stream, text, 3); problem != "" {
					t.Errorf("bob's call %d beside alice's flood: %s", i, problem)
				}
				if n := strings.Count(stream, `"method":"notifications/progress"`); n != 2 || strings.LastIndex(stream, `"method":"notifications/progress"`) > strings.Index(stream, `"result"`) {
					t.Errorf("bob's call %d: %d progress reports, want 2 before its answer:\n%.2000s", i, n, stream)
				}
			}
			if n := g.sessionFast.Load() - before; n != 3 {
				t.Errorf("%d of bob's 3 calls on the session fast path", n)
			}
			carol := connect(t, url, v0728, nil)
			if res, err := carol.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "carol"}}); err != nil || texts(res) != "carol" {
				t.Errorf("a 2026-07-28 client's call beside alice's flood: %v %q", err, texts(res))
			}

			a.leave()
			select {
			case <-a.done:
			case <-ctx.Done():
				t.Fatal("alice's call did not end when she went away")
			}
			waitUntil(t, "the relays gone", func() bool {
				relays, writers, total := relayCounts(g)
				return relays == 0 && writers == 0 && total == 0
			})
		})
	}
}

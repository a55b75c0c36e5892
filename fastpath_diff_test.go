//go:build !mcpadapter_nofastpath

// The differential tests: each compares a client with the fast path and
// one without, and asserts which path each side's calls took. Built with
// -tags mcpadapter_nofastpath both sides would take go-sdk's path and the
// comparison would prove nothing, so these tests are not built there (the
// rest of the root package's tests run on go-sdk's path in that pass).

package mcpadapter_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fast path and go-sdk's path come to the same result or error for
// the same answers, in both eras.
func TestFastPathSameAsSDK(t *testing.T) {
	t.Parallel()
	for _, era := range []string{testserver.Legacy.String(), testserver.Modern.String()} {
		t.Run(era, func(t *testing.T) {
			t.Parallel()
			p := newDiffPair(t, era)
			for _, reply := range diffReplies() {
				p.check(t, reply)
			}
			echoOK(t, testCtx(t), p.fast, "after the replies")
		})
	}
}

// FuzzFastPathSameAsSDK feeds both paths the same server answers: mode
// picks how body is framed (a result, an error, a result with its id
// last, or the whole line).
func FuzzFastPathSameAsSDK(f *testing.F) {
	for i, reply := range diffReplies() {
		f.Add(uint8(3), reply)
		if i < 3 {
			f.Add(uint8(i), `{"content":[{"type":"text","text":"seed"}]}`)
		}
	}
	f.Add(uint8(1), `{"code":1,"message":"m"}`)
	p := newDiffPair(f, testserver.Modern.String())
	f.Fuzz(func(t *testing.T, mode uint8, body string) {
		body = idMarksAsIDs(body)
		var reply string
		switch mode % 4 {
		case 0:
			reply = `{"jsonrpc":"2.0","id":@ID@,"result":` + body + `}`
		case 1:
			reply = `{"jsonrpc":"2.0","id":@ID@,"error":` + body + `}`
		case 2:
			reply = `{"jsonrpc":"2.0","result":` + body + `,"id":@ID@}`
		default:
			reply = body
		}
		p.check(t, reply)
	})
}

// A plain call whose context ends, or that runs out of
// ClientOptions.Timeout, ends the same way on both paths, and the fast
// path tells the server (notifications/cancelled, seen in the protocol
// trace; TestRoundTrip in internal/stdio checks it names the fast path's
// own request); both clients go on.
func TestFastPathCancelAndTimeout(t *testing.T) {
	t.Parallel()
	for _, era := range []string{testserver.Legacy.String(), testserver.Modern.String()} {
		t.Run(era, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			trace := &countingHandler{}
			mk := func(disable bool, log *slog.Logger) *mcpadapter.Client {
				c, err := mcpadapter.NewClient(mcpadapter.Command{Path: testserver.Build(t), Args: []string{"-era", era}}, &mcpadapter.ClientOptions{
					// Timeout bounds the first call's connect too: 400 ms
					// was too short under -race on a loaded machine.
					DisableFastPath: disable, Logger: log, Trace: true, Timeout: 2 * time.Second, StopTimeout: 200 * time.Millisecond,
				})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = c.Close() })
				return c
			}
			fast, sdk := mk(false, slog.New(trace)), mk(true, quietLogger())
			// The first plain call teaches a 2026-07-28 connection's fast
			// path the _meta to send.
			echoOK(t, ctx, fast, "first")
			echoOK(t, ctx, sdk, "first")
			call := func(c *mcpadapter.Client, cancelAfter time.Duration) string {
				cctx, cancel := context.WithTimeout(ctx, cancelAfter)
				defer cancel()
				var msg string
				within(t, 5*time.Second, "a cancelled call", func() {
					_, err := c.CallTool(cctx, "slow", json.RawMessage(`{"ms":5000}`), nil)
					if err == nil {
						t.Fatal("slow returned before its deadline")
					}
					msg = err.Error()
				})
				return msg
			}
			for _, after := range []time.Duration{150 * time.Millisecond, time.Minute} { // the caller's deadline, then Timeout's
				if f, s := call(fast, after), call(sdk, after); f != s {
					t.Errorf("deadline %v:\nfast path: %s\ngo-sdk:    %s", after, f, s)
				}
			}
			// The notices are sent in the background, as go-sdk sends its own.
			cancels := 0
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				cancels = 0
				for _, r := range trace.all() {
					if r["msg"] == "mcp send" && strings.Contains(r["message"], `"notifications/cancelled"`) {
						cancels++
					}
				}
				if cancels == 2 {
					break
				}
			}
			if cancels != 2 {
				t.Errorf("the client sent %d notifications/cancelled, want 2", cancels)
			}
			echoOK(t, ctx, fast, "after the cancelled calls")
			echoOK(t, ctx, sdk, "after the cancelled calls")
		})
	}
}

// TestFastPathInputRequiredSentOnce: an answer that asks for input
// (2026-07-28, over stdio) is handed over to go-sdk, whose multi-round-trip
// loop starts from it: the fast path sends the call as many times as
// go-sdk's path does (the server runs the tool once), and the outcome is
// the same.
func TestFastPathInputRequiredSentOnce(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	mk := func(disable bool, trace *countingHandler) *mcpadapter.Client {
		c, err := mcpadapter.NewClient(mcpadapter.Command{Path: testserver.Build(t), Args: []string{"-era", testserver.Modern.String()}}, &mcpadapter.ClientOptions{
			DisableFastPath: disable, Logger: slog.New(trace), Trace: true, Timeout: 10 * time.Second, StopTimeout: 200 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	fastTrace, sdkTrace := &countingHandler{}, &countingHandler{}
	fast, sdk := mk(false, fastTrace), mk(true, sdkTrace)
	// The first plain call teaches the fast path the _meta to send.
	echoOK(t, ctx, fast, "first")
	echoOK(t, ctx, sdk, "first")
	sent := func(h *countingHandler) int {
		n := 0
		for _, r := range h.all() {
			if r["msg"] == "mcp send" && strings.Contains(r["message"], `"method":"tools/call"`) && strings.Contains(r["message"], `"bad_response"`) {
				n++
			}
		}
		return n
	}
	for _, result := range []string{
		`{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}},"requestState":"s1"}`,
		`{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list","params":{}}},"requestState":"s2"}`,
	} {
		reply := `{"jsonrpc":"2.0","id":@ID@,"result":` + result + `}`
		f0, s0 := sent(fastTrace), sent(sdkTrace)
		var fo, so outcome
		within(t, 30*time.Second, "an input_required answer", func() {
			p := &diffPair{fast: fast, sdk: sdk}
			fo, so = p.call(t, reply)
		})
		if d := compareOutcomes(fo, so); d != "" {
			t.Errorf("reply %.120s:\n%s", reply, d)
		}
		if fo.paths[engine.PathHandedOver] == 0 {
			t.Errorf("reply %.120s: the fast path did not hand the call over: %s", reply, describePaths(fo.paths))
		}
		if f, s := sent(fastTrace)-f0, sent(sdkTrace)-s0; f != s || s == 0 {
			t.Errorf("reply %.120s: the fast path sent the call %d times, go-sdk's path %d", reply, f, s)
		}
		echoOK(t, ctx, fast, "after an input_required answer")
	}
}

// A plain call over streamable HTTP takes the fast path (the server sees
// the fast path's ids) and comes to the same result or error as on
// go-sdk's path, in every cell.
func TestHTTPFastPathSameAsSDK(t *testing.T) {
	t.Parallel()
	for _, cell := range fastHTTPCells() {
		t.Run(cell.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			rs := serveRecording(t, testserver.New(testserver.Options{Era: cell.era}), cell.opts)
			mk := func(disable bool) *mcpadapter.Client {
				c, err := mcpadapter.NewClient(rs.URL, &mcpadapter.ClientOptions{DisableFastPath: disable, Logger: quietLogger()})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = c.Close() })
				return c
			}
			fast, sdk := mk(false), mk(true)
			// The first plain call teaches a 2026-07-28 session the _meta.
			echoOK(t, ctx, fast, "first")
			for _, call := range plainHTTPCalls {
				one := func(c *mcpadapter.Client) outcome {
					// Each call has a bound of its own: under -race on a loaded
					// machine go-sdk's path takes seconds for the 1.5 MB text.
					cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					before := mcpadapter.CallPaths(c)
					res, err := c.CallTool(cctx, call.tool, json.RawMessage(call.args), nil)
					return outcome{res: res, err: errText(err), id: rs.lastCallID(), paths: mcpadapter.CallPaths(c).Sub(before)}
				}
				f := one(fast)
				wantFast(t, rs, true, call.tool)
				s := one(sdk)
				wantFast(t, rs, false, call.tool+" with DisableFastPath")
				if d := compareOutcomes(f, s); d != "" {
					t.Errorf("%s %s:\n%s", call.tool, call.args, d)
				}
			}
		})
	}
}

// The fast path and go-sdk's path come to the same result or error, send
// the same request and leave the connection in the same state, for the
// same answers over streamable HTTP: both eras, the real handler
// answering in event streams and in JSON.
func TestHTTPScriptedSameAsSDK(t *testing.T) {
	t.Parallel()
	for _, era := range []testserver.Era{testserver.Legacy, testserver.Modern} {
		for _, jsonResponse := range []bool{false, true} {
			name := era.String() + "/sse"
			if jsonResponse {
				name = era.String() + "/json"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				p := newHTTPDiffPair(t, era, jsonResponse)
				for _, answer := range httpAnswers() {
					asJSON, asSSE := answerScripts(answer)
					if jsonResponse {
						if timesOutAsJSON(answer) {
							continue
						}
						p.check(t, asJSON)
					} else {
						p.check(t, asSSE)
					}
				}
				for _, s := range httpScripts() {
					p.check(t, s)
				}
				echoOK(t, testCtx(t), p.fast, "after the scripts")
			})
		}
	}
}

// A stdio call handed over to go-sdk (its answer asked for input) that
// then fails — the server process dies while the user is asked — is not
// sent again on a new process: the server answered its first round. (The
// hand-over marks its errors delivered, so that one that looks unsent, a
// write that failed, is not retried either: TestNeverSentHandedOver in
// internal/engine; here the process's end already rules a retry out.)
func TestFastPathFailedStdioHandOffNotResent(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	trace := &countingHandler{}
	var c *mcpadapter.Client
	c, err := mcpadapter.NewClient(mcpadapter.Command{Path: testserver.Build(t), Args: []string{"-era", testserver.Modern.String()}}, &mcpadapter.ClientOptions{
		Logger: slog.New(trace), Trace: true, Timeout: 10 * time.Second, StopTimeout: 200 * time.Millisecond,
		ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			// The server dies while the user answers.
			_, _ = c.CallTool(ctx, "crash", json.RawMessage(`{}`), nil)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ann"}}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	echoOK(t, ctx, c, "first") // teaches the fast path go-sdk's _meta
	reply := `{"jsonrpc":"2.0","id":@ID@,"result":{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}},"requestState":"s1"}}`
	before := mcpadapter.CallPaths(c)
	_, err = c.CallTool(ctx, "bad_response", testserver.ScriptedArgs(reply), nil)
	if err == nil {
		t.Fatal("the call succeeded although the server died during it")
	}
	paths := mcpadapter.CallPaths(c).Sub(before)
	if paths[engine.PathHandedOver] != 1 || paths[engine.PathFast]+paths[engine.PathSDK] != 1 { // the crash call
		t.Errorf("paths: %s, want one call handed over (and the crash call)", describePaths(paths))
	}
	sent := 0
	for _, r := range trace.all() {
		if r["msg"] == "mcp send" && strings.Contains(r["message"], `"method":"tools/call"`) && strings.Contains(r["message"], `"bad_response"`) &&
			!strings.Contains(r["message"], `"inputResponses"`) {
			sent++
		}
	}
	if sent != 1 {
		t.Errorf("the call's first round was sent %d times, want 1 (error: %v)", sent, err)
	}
	echoOK(t, ctx, c, "after, on a new process")
}

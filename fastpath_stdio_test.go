package mcpadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// diffPair is two clients of the same stdio test server binary, one with
// the fast path and one without.
type diffPair struct {
	fast, sdk *mcpadapter.Client
}

func newDiffPair(t testing.TB, era string) *diffPair {
	t.Helper()
	mk := func(disable bool) *mcpadapter.Client {
		c, err := mcpadapter.NewClient(mcpadapter.Command{Path: testserver.Build(t), Args: []string{"-era", era}}, &mcpadapter.ClientOptions{
			DisableFastPath: disable,
			Logger:          quietLogger(),
			// Bounds the answers that never come (a string id); a
			// second was too short for go-sdk's path on a loaded machine.
			Timeout:         3 * time.Second,
			MaxMessageBytes: 64 << 10,
			StopTimeout:     200 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	return &diffPair{fast: mk(false), sdk: mk(true)}
}

// outcome is what a call came to, comparable across the two clients.
type outcome struct {
	res *mcpadapter.Result
	err string
}

func (p *diffPair) call(t testing.TB, reply string) (fast, sdk outcome) {
	t.Helper()
	one := func(c *mcpadapter.Client) outcome {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := c.CallTool(ctx, "bad_response", testserver.ScriptedArgs(reply), nil)
		o := outcome{res: res}
		if err != nil {
			o.err = err.Error()
		}
		return o
	}
	return one(p.fast), one(p.sdk)
}

// check makes the same scripted reply reach both clients and fails if
// their outcomes differ.
func (p *diffPair) check(t testing.TB, reply string) outcome {
	t.Helper()
	return p.checkWith(t, reply, normalized)
}

// checkWith is check, comparing outcomes as norm describes them.
func (p *diffPair) checkWith(t testing.TB, reply string, norm func(outcome) string) outcome {
	t.Helper()
	fast, sdk := p.call(t, reply)
	if norm(fast) != norm(sdk) {
		t.Fatalf("reply %.300q:\nfast path: %s\ngo-sdk:    %s", reply, describe(fast), describe(sdk))
	}
	return fast
}

// messageSize is a size or an offset in a message in an error: the fast
// path's ids have more digits than go-sdk's, so the same answer is a few
// bytes longer.
var messageSize = regexp.MustCompile(`\d+ bytes|byte \d+ of \d+`)

// normalized describes o, with message sizes masked.
func normalized(o outcome) string {
	return messageSize.ReplaceAllString(describe(o), "N")
}

// digitRun is a run of digits.
var digitRun = regexp.MustCompile(`[0-9]+`)

// withoutNumbers describes o with every number masked: a fuzzed answer
// may hold the request's id anywhere (ScriptedIDMark), and an error that
// quotes it then quotes different digits on the two paths.
func withoutNumbers(o outcome) string {
	return digitRun.ReplaceAllString(describe(o), "N")
}

func describe(o outcome) string {
	if o.res == nil {
		return "error " + o.err
	}
	b, _ := json.Marshal(o.res)
	return fmt.Sprintf("result %s (error %q)", b, o.err)
}

// diffReplies are scripted answers to a tools/call: results of every
// shape, error responses, ids in other forms, answers over the size
// limit, input_required, malformed JSON, and messages before the answer.
func diffReplies() []string {
	big := strings.Repeat("x", 100<<10)
	r := func(result string) string { return `{"jsonrpc":"2.0","id":@ID@,"result":` + result + `}` }
	return []string{
		r(`{"content":[{"type":"text","text":"plain"}]}`),
		r(`{"content":[{"type":"text","text":"a\nb \"q\" \u00e9 ✓"}],"isError":true}`),
		r(`{"content":[{"type":"text","text":"3"}],"structuredContent":{"sum":3,"deep":[1,{"x":null}]},"_meta":{"k":[1,"v",true]}}`),
		r(`{"content":[{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"resource_link","uri":"test://a","name":"a"}]}`),
		r(`{"content":[{"type":"text","text":"x"}],"resultType":"complete","ttlMs":5}`),
		r(`{"content":[{"type":"made_up","x":1},{"type":"text","text":"known"}]}`),
		r(`{"content":[{"type":"text","text":"x"}],"structuredContent":{"n":1e400}}`),
		r(`{"content":"not a list"}`),
		r(`{}`),
		r(`null`),
		r(`[]`),
		r(`{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}},"requestState":"s1"}`),
		r(`{"resultType":"input_required"}`),
		r(`{"content":[{"type":"text","text":"` + big + `"}]}`),
		`{"jsonrpc":"2.0","id":@ID@,"error":{"code":-32000,"message":"boom","data":{"why":"scripted"}}}`,
		`{"jsonrpc":"2.0","id":@ID@,"error":{"code":-32602,"message":"bad params"}}`,
		`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"id last"}]},"id":@ID@}`,
		`{"jsonrpc":"2.0","id":@ID@.0,"result":{"content":[{"type":"text","text":"float id"}]}}`,
		`{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":NaN}]}}`,
		`{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"truncated"`,
		`not json at all` + "\n" + r(`{"content":[{"type":"text","text":"after a stray line"}]}`),
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"note"}}` + "\n" + r(`{"content":[{"type":"text","text":"after a notification"}]}`),
		`{"jsonrpc":"2.0","id":"srv-ping","method":"ping"}` + "\n" + r(`{"content":[{"type":"text","text":"after a server request"}]}`),
		`{"jsonrpc":"2.0","id":987654321,"result":{"content":[{"type":"text","text":"nobody asked"}]}}` + "\n" + r(`{"content":[{"type":"text","text":"after a wrong id"}]}`),
		`{"jsonrpc":"2.0","id":"@ID@","result":{"content":[{"type":"text","text":"string id: never matches"}]}}`,
		// Keys as go-sdk's decoder reads them: escapes undone, case kept.
		`{"jsonrpc":"2.0","\u0069d":@ID@,"result":{"content":[{"type":"text","text":"escaped id key"}]}}`,
		`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"escaped id key, last"}]},"i\u0064":@ID@}`,
		// A server request that carries the call's id, before the answer.
		`{"jsonrpc":"2.0","id":@ID@,"method":"ping"}` + "\n" + r(`{"content":[{"type":"text","text":"after a request with the call's id"}]}`),
	}
}

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
		p.checkWith(t, reply, withoutNumbers)
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
		`{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"}},"requestState":"s2"}`,
	} {
		reply := `{"jsonrpc":"2.0","id":@ID@,"result":` + result + `}`
		f0, s0 := sent(fastTrace), sent(sdkTrace)
		var fo, so outcome
		within(t, 30*time.Second, "an input_required answer", func() {
			p := &diffPair{fast: fast, sdk: sdk}
			fo, so = p.call(t, reply)
		})
		if normalized(fo) != normalized(so) {
			t.Errorf("reply %.120s:\nfast path: %s\ngo-sdk:    %s", reply, describe(fo), describe(so))
		}
		if f, s := sent(fastTrace)-f0, sent(sdkTrace)-s0; f != s || s == 0 {
			t.Errorf("reply %.120s: the fast path sent the call %d times, go-sdk's path %d", reply, f, s)
		}
		echoOK(t, ctx, fast, "after an input_required answer")
	}
}

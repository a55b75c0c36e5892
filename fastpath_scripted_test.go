package mcpadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// httpDiffPair is two clients of the same scripted streamable HTTP peer,
// one with the fast path and one without (the HTTP twin of diffPair).
type httpDiffPair struct {
	peer      *testserver.ScriptedHTTP
	fast, sdk *mcpadapter.Client
}

// httpDiffTimeout is the pair's ClientOptions.Timeout, which bounds the
// scripted calls: longer than any reconnection the scripts ask for (their
// retry fields) and than an answer takes on a busy machine, so that a call
// either gets its answer or times out on both paths alike.
const httpDiffTimeout = 3 * time.Second

// realCall is the CallOptions of the pair's calls of real tools (the
// warm-up, the echo after each script): they may have to reconnect after
// a script broke the connection, which under load (the whole suite with
// -race on 2 cores) took more than 1.5 s.
var realCall = &mcpadapter.CallOptions{Timeout: 20 * time.Second}

func newHTTPDiffPair(t testing.TB, era testserver.Era, jsonResponse bool) *httpDiffPair {
	t.Helper()
	peer := testserver.StartScriptedHTTP(t, era, jsonResponse)
	mk := func(disable bool) *mcpadapter.Client {
		c, err := mcpadapter.NewClient(peer.URL, &mcpadapter.ClientOptions{
			DisableFastPath: disable,
			Logger:          quietLogger(),
			Timeout:         httpDiffTimeout,
			MaxMessageBytes: 64 << 10,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		// A first plain call: on a 2026-07-28 connection it teaches the
		// fast path what go-sdk sends with every request.
		args := json.RawMessage(`{"text":"warm"}`)
		if res, err := c.CallTool(ctx, "echo", args, realCall); err != nil || res.Text() != "warm" {
			t.Fatalf("echo: %v %+v", err, res)
		}
		return c
	}
	return &httpDiffPair{peer: peer, fast: mk(false), sdk: mk(true)}
}

// httpOutcome is what a scripted call came to on one client: the result
// or error (with the id of its first POST and the paths it took), the
// POSTs of the call the peer received (first request's headers and body,
// how many), and what an echo call made right after came to (a path that
// breaks the connection where the other does not shows there).
type httpOutcome struct {
	call    outcome
	request string
	posts   int
	after   string
}

// one calls the scripted tool on c, the peer answering with s.
func (p *httpDiffPair) one(c *mcpadapter.Client, s testserver.HTTPScript) httpOutcome {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	before, paths := len(p.peer.Calls()), mcpadapter.CallPaths(c)
	res, err := c.CallTool(ctx, testserver.ScriptedTool, testserver.HTTPScriptArgs(s), nil)
	o := httpOutcome{call: outcome{res: res, err: errText(err), paths: mcpadapter.CallPaths(c).Sub(paths)}}
	calls := p.peer.Calls()[before:]
	o.posts = len(calls)
	if len(calls) > 0 {
		o.request = requestShape(calls[0])
		o.call.id = calls[0].ID
	}
	res, err = c.CallTool(ctx, "echo", json.RawMessage(`{"text":"after"}`), realCall)
	o.after = describe(outcome{res: res, err: errText(err)})
	return o
}

func (p *httpDiffPair) call(t testing.TB, s testserver.HTTPScript) (fast, sdk httpOutcome) {
	t.Helper()
	return p.one(p.fast, s), p.one(p.sdk, s)
}

// requestShape describes a POST of a scripted call as both paths must
// send it: every header but Content-Length (the ids' digits differ) with
// the session id's value masked (each client has its own session), and
// the JSON body with its id masked, members sorted.
func requestShape(c testserver.ScriptedCall) string {
	h := c.Header.Clone()
	h.Del("Content-Length")
	if h.Get(testserver.SessionHeader) != "" {
		h.Set(testserver.SessionHeader, "S")
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range h {
			if !yield(k) {
				return
			}
		}
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %q\n", k, h[k])
	}
	var body map[string]any
	if err := json.Unmarshal(c.Body, &body); err != nil {
		return b.String() + "undecodable body " + string(c.Body)
	}
	body["id"] = "ID"
	j, _ := json.Marshal(body)
	return b.String() + string(j)
}

// sessionText is a session id quoted in a go-sdk error: each client has
// its own.
var sessionText = regexp.MustCompile(`session ID: [^ )]*|session IDs "[^"]*"`)

// httpDescribed describes o for compareHTTP: the call's outcome
// (describeOwn, with ownChar) and the echo's after it, with the two calls'
// ids (maskIDs) and session ids masked, and the request the peer
// received.
func httpDescribed(o httpOutcome, ownChar bool, ids ...string) string {
	call := sessionText.ReplaceAllString(maskIDs(describeOwn(o.call, ownChar), ids...), "session S")
	after := sessionText.ReplaceAllString(o.after, "session S")
	return fmt.Sprintf("%s\nrequest (%d POSTs):\n%s\nthen echo: %s", call, o.posts, o.request, after)
}

// compareHTTP returns how fast and sdk, the outcomes of the same script
// on the fast path's client and on go-sdk's path's client, differ, or ""
// if they do not: the paths the calls took (pathDiff), their results or
// errors, the requests the peer received, and the echo after.
func compareHTTP(fast, sdk httpOutcome) string {
	d := pathDiff(fast.call.paths, sdk.call.paths)
	ids := []string{fast.call.id, sdk.call.id}
	f, g := alignCuts(httpDescribed(fast, false, ids...), httpDescribed(sdk, false, ids...))
	if f != g && !equalAligned(httpDescribed(fast, true, ids...), httpDescribed(sdk, true, ids...)) {
		d += lineDiff(f, g)
	}
	return d
}

// check makes the peer answer both clients' call with s and fails if
// their outcomes differ.
func (p *httpDiffPair) check(t testing.TB, s testserver.HTTPScript) {
	t.Helper()
	fast, sdk := p.call(t, s)
	if d := compareHTTP(fast, sdk); d != "" {
		script, _ := json.Marshal(s)
		t.Errorf("script %.600s:\n%s", script, d)
	}
}

// lineDiff lists the lines of the fast path's outcome f that go-sdk's, g,
// lacks, and the other way round.
func lineDiff(f, g string) string {
	fl, gl := strings.Split(f, "\n"), strings.Split(g, "\n")
	var b strings.Builder
	for _, l := range fl {
		if !slices.Contains(gl, l) {
			b.WriteString("fast path: " + l + "\n")
		}
	}
	for _, l := range gl {
		if !slices.Contains(fl, l) {
			b.WriteString("go-sdk:    " + l + "\n")
		}
	}
	return b.String()
}

// httpAnswers are JSON-RPC messages answering a scripted call, one per
// line, each line a message (diffReplies, the stdio test's answers, and
// notifications of several kinds before the answer). As application/json
// the body is the last message; as text/event-stream each is an event.
func httpAnswers() []string {
	r := func(text string) string {
		return `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`
	}
	return append(diffReplies(),
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"nobody","progress":1}}`+"\n"+r("after progress for an unknown token"),
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`+"\n"+r("after list_changed"),
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","logger":"l","data":{"k":1}}}`+"\n"+r("after a log"),
		`{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"first"}]}}`+"\n"+r("second answer"),
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"no answer follows"}}`,
		`{"jsonrpc":"2.0","id":987654321,"result":{"content":[{"type":"text","text":"only the wrong id"}]}}`,
		`{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"@PAD@"}]}}`,
		`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"@PAD@"}]},"id":@ID@}`,
		`{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"@PAD@`,
		`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"no id"}]}}`,
		`{"jsonrpc":"2.0","id":null,"result":{"content":[{"type":"text","text":"null id"}]}}`,
		`{"jsonrpc":"2.0","id":@ID@e0,"result":{"content":[{"type":"text","text":"exponent id"}]}}`,
		`{"jsonrpc":"2.0","id":-@ID@,"result":{"content":[{"type":"text","text":"negative id"}]}}`,
		`{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"no version"}]},"extra":1}`,
		`{"id":@ID@,"result":{"content":[{"type":"text","text":"no jsonrpc member"}]}}`,
		`{"jsonrpc":"2.0","id":@ID@,"result":{"content":[]},"error":{"code":1,"message":"both"}}`,
		`{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"done"}],"resultType":"complete","inputRequests":{"q":{"method":"roots/list"}}}}`,
		`{"jsonrpc":"2.0","id":@ID@,"result":{"resultType":"complete","inputRequests":{"q":{"method":"roots/list"}}}}`,
		`{"jsonrpc":"2.0","id":@ID@,"result":{"resultType":"other","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object"}}}}}}`,
		nullQuestion,
	)
}

// answerScripts frames an answer of httpAnswers as the peer's answer:
// application/json (last message) and text/event-stream (one event each).
func answerScripts(answer string) (asJSON, asSSE testserver.HTTPScript) {
	msgs := strings.Split(answer, "\n")
	pad := 0
	if strings.Contains(answer, testserver.ScriptedPadMark) {
		pad = 100 << 10
	}
	asJSON = testserver.HTTPScript{Body: msgs[len(msgs)-1], Pad: pad}
	asSSE = testserver.HTTPScript{Events: []testserver.SSEEvent{}, Pad: pad}
	for _, m := range msgs {
		asSSE.Events = append(asSSE.Events, testserver.SSEEvent{Data: m})
	}
	return asJSON, asSSE
}

// timesOutAsJSON reports whether answer, as a JSON body, answers no call
// (a wrong, missing or null id; only a notification), so that a client
// waits for its timeout: the event stream cases test these in full (the
// stream ends, the call fails at once); as JSON only two of them are
// kept, to bound the test's time.
func timesOutAsJSON(answer string) bool {
	last := answer[strings.LastIndexByte(answer, '\n')+1:]
	if strings.Contains(last, `":@ID@`) || strings.Contains(last, "only the wrong id") || strings.Contains(last, "string id") {
		return false
	}
	return strings.Contains(last, `"jsonrpc"`) && !strings.Contains(last, "NaN") && !strings.Contains(last, "truncated")
}

// httpScripts are answers only HTTP can give: statuses, headers, event
// stream framing, streams that end early and their resumption.
func httpScripts() []testserver.HTTPScript {
	const ok = `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"ok"}]}}`
	const rpcErr = `{"jsonrpc":"2.0","id":@ID@,"error":{"code":-32603,"message":"scripted failure"}}`
	const anyErr = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad request"}}`
	type ev = testserver.SSEEvent
	type S = testserver.HTTPScript
	var out []S
	for _, status := range []int{400, 401, 403, 404, 405, 406, 415, 429, 500, 502, 503} {
		out = append(out,
			S{Status: status, ContentType: "text/plain", Body: "scripted " + http.StatusText(status)},
			S{Status: status, Body: rpcErr},
			S{Status: status, Body: anyErr},
			S{Status: status, ContentType: "-"},
		)
	}
	out = append(out,
		S{Status: 401, ContentType: "text/plain", Header: map[string]string{"WWW-Authenticate": `Bearer resource_metadata="http://127.0.0.1:1/x"`}, Body: "no"},
		S{Status: 202},
		S{Status: 204},
		S{Status: 200, ContentType: "-"},
		S{Status: 200},
		S{Status: 201, Body: ok},
		S{ContentType: "text/plain", Body: ok},
		S{ContentType: "application/json; charset=utf-8", Body: ok},
		S{ContentType: "Application/JSON", Body: ok},
		S{ContentType: "application/json", Body: "\n  " + ok + "\n\n"},
		S{ContentType: "application/json", Body: "[" + ok + "]"},
		S{ContentType: "application/json", Body: ok + ok},
		S{ContentType: "text/event-stream; charset=utf-8", Events: []ev{{Data: ok}}},
		S{ContentType: "text/html", Events: []ev{{Data: ok}}},
		S{DelayMs: 50, Body: ok},
		S{Header: map[string]string{testserver.SessionHeader: "another-session"}, Body: ok},
		// Event stream framing.
		S{Events: []ev{{Comment: "keep-alive"}, {Event: "message", Data: ok}}},
		S{Events: []ev{{Event: "other", Data: ok}}},
		S{Events: []ev{{Event: "other", Data: `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"hidden"}]}}`}, {Data: ok}}},
		S{Events: []ev{{Data: strings.Replace(ok, `,"result"`, ",\n\"result\"", 1)}}},
		S{CRLF: true, Events: []ev{{Comment: "c", ID: "e1", Data: ok}}},
		S{Events: []ev{{Raw: "data:" + ok + "\r\r"}}},
		S{Events: []ev{{Raw: "data: " + ok}}},
		S{Events: []ev{{Raw: "data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":@ID@,\"result\":{}}\n\n"}}},
		S{Events: []ev{{ID: "prime"}, {DelayMs: 20, Data: ok}}},
		S{Events: []ev{{Data: "  "}, {Data: ok}}},
		S{Events: []ev{{Data: "not json"}, {Data: ok}}},
		S{Events: []ev{{Data: `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"@PAD@"}]}}`}}, Pad: 100 << 10},
		S{Events: []ev{{Comment: "@PAD@"}, {Data: ok}}, Pad: 100 << 10},
		// Many events go-sdk skips before the answer: comments, events of
		// another name, empty priming events with ids.
		S{Events: append(slices.Repeat([]ev{{Comment: "keep-alive"}, {Event: "other", Data: ok}, {ID: "p", Retry: 5}}, 200), ev{Data: ok})},
		S{Events: []ev{{Data: `{"jsonrpc":"2.0","id":@ID@,"result":{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}},"requestState":"s1"}}`}}},
		S{Events: []ev{{Data: `{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}`}, {Data: ok}}},
		S{Events: []ev{{Data: `{"jsonrpc":"2.0","id":@ID@,"method":"roots/list"}`}, {Data: ok}}},
		S{Events: []ev{{Data: `{"jsonrpc":"2.0","method":"roots/list","id":@ID@}`}, {Data: ok}}},
		// A nested "id":<the call's id>} ending a data line of a message
		// of several lines.
		S{Events: []ev{{Raw: "data: {\"jsonrpc\":\"2.0\",\"id\":@ID@,\"result\":{\"content\":[],\"structuredContent\":{\"a\":{\"id\":@ID@}\ndata: }}}\n\n"}}},
		S{Events: []ev{{Data: `{"jsonrpc":"2.0","id":"srv-2","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`}, {Data: ok}}},
		// Streams that end before the answer: without an event id (not
		// resumable); with one, resumed by a GET with Last-Event-ID that
		// the peer answers, refuses (405), or answers with 404 or a stream
		// that ends again.
		S{Events: []ev{}},
		S{Events: []ev{{Data: `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"then nothing"}}`}}},
		S{Events: []ev{{ID: "r1", Retry: 5}}, Resume: &S{Events: []ev{{ID: "r2", Data: ok}}}},
		S{Events: []ev{{ID: "r1", Retry: 5, Data: `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"before"}}`}}, Resume: &S{Events: []ev{{Data: ok}}}},
		S{Events: []ev{{ID: "r1", Retry: 5}}},
		S{Events: []ev{{ID: "r1", Retry: 5}}, Resume: &S{Status: 404, ContentType: "text/plain", Body: "gone"}},
		S{Events: []ev{{ID: "r1", Retry: 5}}, Resume: &S{Body: ok}},
		S{Events: []ev{{ID: "r1", Retry: 5}}, Resume: &S{Events: []ev{{ID: "r1", Retry: 5}}}},
		S{Events: []ev{{ID: "r1", Retry: 5}}, Resume: &S{Events: []ev{{ID: "r2", Retry: 5}}, Resume: &S{Events: []ev{{Data: rpcErr}}}}},
	)
	return out
}

package mcpadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// diffPair is two clients of the same stdio test server binary, one with
// the fast path and one without, each with a protocol trace that keeps the
// id of its last tools/call.
type diffPair struct {
	fast, sdk       *mcpadapter.Client
	fastIDs, sdkIDs *callIDTrace
}

func newDiffPair(t testing.TB, era string) *diffPair {
	t.Helper()
	mk := func(disable bool, ids *callIDTrace) *mcpadapter.Client {
		c, err := mcpadapter.NewClient(mcpadapter.Command{Path: testserver.Build(t), Args: []string{"-era", era}}, &mcpadapter.ClientOptions{
			DisableFastPath: disable,
			Logger:          slog.New(ids),
			Trace:           true, // the stdio fast path traces its messages as go-sdk does
			// Bounds the answers that never come (a string id). Three
			// seconds were too short, on a loaded machine under -race,
			// for 350 traced messages before an answer on either path.
			Timeout:         8 * time.Second,
			MaxMessageBytes: 64 << 10,
			StopTimeout:     200 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		// A first plain call: on a 2026-07-28 connection it teaches the
		// fast path what go-sdk sends with every request.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"warm"}`), nil); err != nil || res.Text() != "warm" {
			t.Fatalf("echo: %v %+v", err, res)
		}
		return c
	}
	p := &diffPair{fastIDs: &callIDTrace{}, sdkIDs: &callIDTrace{}}
	p.fast, p.sdk = mk(false, p.fastIDs), mk(true, p.sdkIDs)
	return p
}

// outcome is what a call came to on one client, comparable across the two.
type outcome struct {
	res *mcpadapter.Result
	err string
	// id is the JSON-RPC id the call was sent with, as JSON ("" if not
	// known): the two paths number their requests apart.
	id string
	// request is the tools/call as the client sent it, id masked ("" if
	// not known).
	request string
	// paths are the tools/calls the client made for it, by path.
	paths engine.Paths
}

// one calls the scripted tool on c, the pair's client whose trace is ids,
// answered with reply.
func (p *diffPair) one(c *mcpadapter.Client, ids *callIDTrace, reply string) outcome {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	before := mcpadapter.CallPaths(c)
	res, err := c.CallTool(ctx, "bad_response", testserver.ScriptedArgs(reply), nil)
	o := outcome{res: res, id: ids.last(), request: ids.sent(), paths: mcpadapter.CallPaths(c).Sub(before)}
	if err != nil {
		o.err = err.Error()
	}
	return o
}

func (p *diffPair) call(t testing.TB, reply string) (fast, sdk outcome) {
	t.Helper()
	// Each client has a server process of its own: the two calls go at
	// once, so an answer that never comes costs one Timeout, not two.
	var wg sync.WaitGroup
	wg.Go(func() { sdk = p.one(p.sdk, p.sdkIDs, reply) })
	fast = p.one(p.fast, p.fastIDs, reply)
	wg.Wait()
	return fast, sdk
}

// check makes the same scripted reply reach both clients and fails if
// their outcomes differ (compareOutcomes).
func (p *diffPair) check(t testing.TB, reply string) outcome {
	t.Helper()
	fast, sdk := p.call(t, reply)
	if d := compareOutcomes(fast, sdk); d != "" {
		t.Fatalf("reply %.300q:\n%s", reply, d)
	}
	return fast
}

// compareOutcomes returns how fast and sdk, the outcomes of the same
// answer on the fast path's client and on go-sdk's path's client, differ,
// or "" if they do not. The fast path's client must have taken the fast
// path (or handed the call over to go-sdk from it) and go-sdk's client
// go-sdk's path. The results or errors must be the same but for what the
// two paths' ids change (maskIDs), and so must the requests sent.
func compareOutcomes(fast, sdk outcome) string {
	d := pathDiff(fast.paths, sdk.paths)
	f, g := alignCuts(maskIDs(describeOwn(fast, false), fast.id, sdk.id), maskIDs(describeOwn(sdk, false), fast.id, sdk.id))
	if f != g && !equalAligned(maskIDs(describeOwn(fast, true), fast.id, sdk.id), maskIDs(describeOwn(sdk, true), fast.id, sdk.id)) {
		d += fmt.Sprintf("fast path: %s\ngo-sdk:    %s\n", f, g)
	}
	if fast.request != sdk.request {
		d += fmt.Sprintf("fast path sent: %s\ngo-sdk sent:    %s\n", fast.request, sdk.request)
	}
	return d
}

// pathDiff says what is wrong with the paths the two clients' calls
// took, or "": the fast path's client's on the fast path (or handed over
// from it), go-sdk's client's on go-sdk's.
func pathDiff(fast, sdk engine.Paths) string {
	var d string
	if fast[engine.PathSDK] != 0 || fast[engine.PathFast]+fast[engine.PathHandedOver] == 0 {
		d += fmt.Sprintf("the fast path's client did not take the fast path: %s\n", describePaths(fast))
	}
	if sdk[engine.PathSDK] == 0 || sdk[engine.PathFast]+sdk[engine.PathHandedOver] != 0 {
		d += fmt.Sprintf("go-sdk's client did not take go-sdk's path: %s\n", describePaths(sdk))
	}
	return d
}

// describePaths lists the calls of p by path.
func describePaths(p engine.Paths) string {
	var parts []string
	for i, n := range p {
		if n != 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, engine.Path(i)))
		}
	}
	if parts == nil {
		return "no call"
	}
	return strings.Join(parts, ", ")
}

// messageSize is the size of an answer, or an offset in it, as the
// client's errors give them: "the tool's result was too large (N bytes;
// …)", "truncated after N bytes", "at byte N of N" (a limit is the same
// on both paths, and a size in what the server wrote is its own).
var messageSize = regexp.MustCompile(`result was too large \((?:more than )?\d+ bytes|truncated after \d+ bytes|byte \d+ of \d+`)

// sizeDigits is a run of digits, for messageSize.
var sizeDigits = regexp.MustCompile(`\d+`)

// maskIDs masks in text what must differ between the two paths: the
// calls' JSON-RPC ids (each path numbers its requests: go-sdk from 1, the
// fast path from stdio.FirstDirectID), wherever text holds one as a whole
// number (the server may put the id it got anywhere in its answer, and
// errors quote answers), and, when the ids differ in length, the sizes
// and offsets of messages in errors (the same answer is as many bytes
// longer as the id has digits more). Both ids are masked on both sides.
func maskIDs(text string, ids ...string) string {
	slices.SortFunc(ids, func(a, b string) int { return len(b) - len(a) })
	// Each regexp runs only where its literal part occurs: under -race a
	// regexp takes seconds over the megabytes of a long answer.
	if len(ids) == 2 && len(ids[0]) != len(ids[1]) && strings.Contains(text, "byte") {
		text = messageSize.ReplaceAllStringFunc(text, func(m string) string { return sizeDigits.ReplaceAllString(m, "N") })
	}
	for _, id := range ids {
		if id == "" || !strings.Contains(text, id) {
			continue
		}
		re := regexp.MustCompile(`(^|[^0-9])` + regexp.QuoteMeta(id) + `([^0-9]|$)`)
		for range 2 { // matches that share a separator
			text = re.ReplaceAllString(text, "${1}ID${2}")
		}
	}
	if !strings.Contains(text, "...") {
		return text
	}
	return cutQuote.ReplaceAllStringFunc(text, func(q string) string {
		m := cutQuote.FindStringSubmatch(q)
		for _, id := range ids {
			if m[3] == "ID" || (id != "" && len(m[3]) < len(id) && strings.HasPrefix(id, m[3])) {
				return m[1] + m[2] + "ID…"
			}
		}
		return q
	})
}

// alignCuts returns f and g with an excerpt cut short on one side
// matched on the other: where the other side has the same line up to the
// cut, the rest of its line is cut too. go-sdk cuts its excerpt of an
// undecodable message after a fixed count, so the cut falls where it does
// because of the length of the id before it; what it cut off is the same
// answer's bytes.
func alignCuts(f, g string) (string, string) {
	fl, gl := strings.Split(f, "\n"), strings.Split(g, "\n")
	if len(fl) != len(gl) {
		return f, g
	}
	for i := range fl {
		fl[i], gl[i] = alignCut(fl[i], gl[i])
		gl[i], fl[i] = alignCut(gl[i], fl[i])
	}
	return strings.Join(fl, "\n"), strings.Join(gl, "\n")
}

// alignCut cuts b as a is cut (alignCuts), one line each, where the two
// differ only in where an excerpt was cut: a's excerpt ends in a cut id
// ("ID…", cutQuote) where b has the whole id and goes on to its cut
// ("...", or the end of its excerpt) for no more than maxIDDigits bytes;
// or a's excerpt is cut ("...") after an id at a place b's shows too,
// b's going on from there for no more than maxIDDigits bytes. The rest of
// the line must be the same: the cut falls by the length of the id before
// it, and only that much is hidden.
func alignCut(a, b string) (string, string) {
	if i := strings.Index(a, "ID…"); i >= 0 && len(b) >= i+2 && b[:i+2] == a[:i+2] {
		if rest, ok := cutRest(b[i+2:], a[i+len("ID…"):]); ok {
			return a, b[:i+2] + "…" + rest
		}
	}
	for k := 0; ; {
		j := strings.Index(a[k:], "...")
		if j < 0 {
			return a, b
		}
		k += j
		if len(b) >= k && b[:k] == a[:k] && strings.Contains(a[:k], "ID") {
			if rest, ok := cutRest(b[k:], a[k+len("..."):]); ok {
				return a, b[:k] + "..." + rest
			}
		}
		k += len("...")
	}
}

// cutRest reports whether tail, what follows a place in a line where the
// other side's excerpt was cut, goes on for at most maxIDDigits bytes,
// through its own "..." or not, to rest, the other side's line after its
// cut; it returns rest.
func cutRest(tail, rest string) (string, bool) {
	for n := 0; n <= maxIDDigits && n <= len(tail); n++ {
		t := tail[n:]
		if t == rest || strings.TrimPrefix(t, "...") == rest && strings.HasPrefix(t, "...") {
			return rest, true
		}
	}
	return "", false
}

// equalAligned reports whether f and g are the same once their cut
// excerpts are aligned.
func equalAligned(f, g string) bool {
	f, g = alignCuts(f, g)
	return f == g
}

// maxIDDigits is the most digits of a request id: the fast path's
// (stdio.FirstDirectID and up).
const maxIDDigits = 16

// cutQuote is an id in an excerpt cut short: go-sdk's JSON decoding
// errors quote the first bytes of what they could not decode, cut after
// a fixed count and ended with "..." (json: cannot unmarshal
// "[{\"jsonrpc\":\"2.0\",\"id\":12...", or after "looking for
// beginning of value: "), so where the cut falls depends on the length of
// the id in it. maskIDs masks an id such an excerpt ends in (whole,
// already masked, cut, or cut before its first digit) as "ID…"; alignCut
// matches it with the other side's excerpt, which goes on after its whole
// id by no more than the ids' difference in length. The quote may start
// inside the key (found 'i': id":12...).
var cutQuote = regexp.MustCompile(`(^|[^A-Za-z0-9_])(\\?"?id\\?":)(ID|[0-9]*)\.\.\.`)

// quotedID is the id member of a message an error quotes, also where the
// quote starts inside its key (a decoding error quotes from the character
// it did not expect: found 'i': id":2}).
var quotedID = regexp.MustCompile(`(^|[^A-Za-z0-9_])(\\*"?id\\*":\s*)-?[0-9]+`)

// quotedIDs masks the ids of the messages o's error quotes: go-sdk quotes
// a message it could not take with the id it gave the call (on the fast
// path, after a hand-over, the id translated from the fast path's), and
// the two clients number their requests apart. A result is left as it is.
func quotedIDs(o outcome) outcome {
	o.err = quotedID.ReplaceAllString(o.err, "${1}${2}ID")
	return o
}

// describeOwn describes o with the ids of the messages its error quotes
// masked (quotedIDs), and a decoding error that names the first character
// of o's own id as the one it did not expect (invalid character '1' after
// object key:value pair; expected ',' after object field value but found
// '1': 1000000000000020}: the server wrote the id where a value ended)
// saying so, and where it quotes the input from that character on, the
// id there masked.
// It masks the character only when asked (ownChar): the comparators
// accept two outcomes that are the same either way, as the same character
// may come from elsewhere (a number's leading zero).
func describeOwn(o outcome, ownChar bool) string {
	d := describe(quotedIDs(o))
	if ownChar && o.id != "" {
		c := "'" + o.id[:1] + "'"
		d = strings.ReplaceAll(d, c+": "+o.id, "'ID': ID")
		d = strings.ReplaceAll(d, "invalid character "+c, "invalid character 'ID'")
		d = strings.ReplaceAll(d, "found "+c, "found 'ID'")
	}
	return d
}

// idMarksAsIDs returns a fuzzed answer with testserver.ScriptedIDMark
// kept only where it is a message's id (right after "id":, not followed
// by more digits that would make it part of a longer number) and a fixed
// number that no request has elsewhere (a small one may be go-sdk's id of
// the call on one side only). Elsewhere the answer would hold the call's id in its
// content, or in bytes that errors quote, where the two paths' ids differ
// in every digit and no mask short of every number could tell them from a
// real difference; the tables have the call's id in content.
func idMarksAsIDs(body string) string {
	const mark = testserver.ScriptedIDMark
	var b strings.Builder
	for {
		i := strings.Index(body, mark)
		if i < 0 {
			return b.String() + body
		}
		b.WriteString(body[:i])
		rest := body[i+len(mark):]
		if strings.HasSuffix(body[:i], `"id":`) && (rest == "" || rest[0] < '0' || rest[0] > '9') {
			b.WriteString(mark)
		} else {
			b.WriteString("987654321") // no request has this id
		}
		body = body[i+len(mark):]
	}
}

func describe(o outcome) string {
	if o.res == nil {
		return "error " + o.err
	}
	b, _ := json.Marshal(o.res)
	return fmt.Sprintf("result %s (error %q)", b, o.err)
}

// callIDTrace is a slog.Handler for a client's protocol trace that keeps
// the id of the last tools/call the client sent, and the call as sent
// with its id masked (both paths trace what they write).
type callIDTrace struct {
	mu      sync.Mutex
	id      string
	request string
}

func (h *callIDTrace) Enabled(context.Context, slog.Level) bool { return true }
func (h *callIDTrace) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *callIDTrace) WithGroup(string) slog.Handler            { return h }
func (h *callIDTrace) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "mcp send" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != "message" {
			return true
		}
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(a.Value.String()), &m) == nil && string(m["method"]) == `"tools/call"` {
			id := string(m["id"])
			m["id"] = json.RawMessage(`"ID"`)
			b, _ := json.Marshal(m) // members sorted
			h.mu.Lock()
			h.id, h.request = id, string(b)
			h.mu.Unlock()
		}
		return false
	})
	return nil
}

// sent returns the last tools/call's request, id masked.
func (h *callIDTrace) sent() string {
	if h == nil {
		return ""
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.request
}

func (h *callIDTrace) last() string {
	if h == nil {
		return ""
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.id
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
		// Rounds and what only looks like one (plaincall.Round): a task
		// that shows its questions, a complete result, no type, a null
		// question, load shed for ever, a URL that is no web page, a round
		// that never ends, keys go-sdk reads apart (case kept, escapes
		// undone).
		r(`{"resultType":"task","taskId":"t1","status":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"name?"}}}}`),
		r(`{"ResultType":"task","taskId":"t1","status":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"name?"}}}}`),
		r(`{"\u0072esultType":"task","taskId":"t1","status":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"name?"}}}}`),
		r(`{"resultType":"complete","content":[],"inputRequests":{"q":{"method":"elicitation/create","params":{"message":"name?"}}}}`),
		r(`{"inputRequests":{"q":{"method":"elicitation/create","params":{"message":"name?"}}},"requestState":"s"}`),
		r(`{"resultType":"input_required","INPUTREQUESTS":{"q":{"method":"elicitation/create","params":{"message":"name?"}}}}`),
		r(`{"resultType":"input_required","inputRequests":{"q":null}}`),
		r(`{"resultType":"input_required","inputRequests":{}}`),
		r(`{"resultType":"input_required","inputRequests":{"u":{"method":"elicitation/create","params":{"mode":"url","message":"go","url":"javascript:alert(1)","elicitationId":"e"}}}}`),
		r(`{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list","params":{}}},"requestState":"again"}`),
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
		// A key go-sdk does not read as "id" (it matches case): the answer
		// answers nothing.
		`{"jsonrpc":"2.0","ID":@ID@,"result":{"content":[{"type":"text","text":"capital ID: no id"}]}}`,
		// A server request that carries the call's id, before the answer.
		`{"jsonrpc":"2.0","id":@ID@,"method":"ping"}` + "\n" + r(`{"content":[{"type":"text","text":"after a request with the call's id"}]}`),
		// Many messages to skip before the answer.
		strings.Repeat(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"skip"}}`+"\n", 300) +
			strings.Repeat(`{"jsonrpc":"2.0","id":987654321,"result":{}}`+"\n", 50) + r(`{"content":[{"type":"text","text":"after 350 messages"}]}`),
	}
}

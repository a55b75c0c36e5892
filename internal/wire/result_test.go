package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// preciseResult is a tool result whose structured content a decode into
// maps would change: members out of order, integers beyond float64.
const preciseResult = `{"content":[{"type":"text","text":"x"}],"structuredContent":{"z":1,"id":12345678901234567890,"a":9007199254740993}}`

func TestTapKeepsResult(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"precise"}}`
	for _, tc := range []struct {
		name, contentType, body string
		want                    string // "" when nothing is to be kept
	}{
		{"json", "application/json", `{"jsonrpc":"2.0","id":7,"result":` + preciseResult + `}`, preciseResult},
		{"json, id after the result", "application/json", `{"result":` + preciseResult + `,"jsonrpc":"2.0","id":7}`, preciseResult},
		{"sse after a notification and a server request", "text/event-stream",
			"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":1}}\n\n" +
				"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"elicitation/create\",\"params\":{\"result\":1}}\n\n" +
				"id: 3\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":" + preciseResult + "}\r\n\r\n", preciseResult},
		{"sse, last event without its blank line", "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":" + preciseResult + "}", preciseResult},
		{"another request's answer", "application/json", `{"jsonrpc":"2.0","id":8,"result":` + preciseResult + `}`, ""},
		{"an error", "application/json", `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"no"}}`, ""},
		{"a duplicated result", "application/json", `{"jsonrpc":"2.0","id":7,"result":{},"result":` + preciseResult + `}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				fmt.Fprint(w, tc.body)
			})
			for _, trace := range []bool{false, true} {
				obs := NewObserver("srv", nil)
				if trace {
					obs = NewObserver("srv", quietTrace())
				}
				tap := &Tap{Base: srv.Client().Transport, Observer: obs, Observe: true}
				ctx, rs := TrackRequest(t.Context())
				rs.KeepResult("tools/call")
				_, body, err := post(t, ctx, tap, srv.URL, call)
				if err != nil {
					t.Fatal(err)
				}
				if string(body) != tc.body {
					t.Fatalf("the tap changed the body: %q", body)
				}
				got, ok := rs.Result()
				if string(got) != tc.want || ok != (tc.want != "") {
					t.Errorf("trace %v: Result() = %s, %v; want %s", trace, got, ok, tc.want)
				}
			}
		})
	}
}

// quietTrace is a trace logger that writes nowhere.
func quietTrace() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func TestTapKeepsOnlyTheTrackedCall(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":7,"result":`+preciseResult+`}`)
	})
	tap := &Tap{Base: srv.Client().Transport, Observer: NewObserver("srv", nil), Observe: true}
	ctx, rs := TrackRequest(t.Context())
	rs.KeepResult("tools/call")
	// go-sdk sends a call's cancellation with the call's context.
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`,
	} {
		if _, _, err := post(t, ctx, tap, srv.URL, body); err != nil {
			t.Fatal(err)
		}
	}
	if got, ok := rs.Result(); ok {
		t.Errorf("kept %s from messages that were not the call", got)
	}
	// Untracked (no KeepResult): nothing is kept.
	ctx, other := TrackRequest(t.Context())
	if _, _, err := post(t, ctx, tap, srv.URL, `{"jsonrpc":"2.0","id":7,"method":"tools/call"}`); err != nil {
		t.Fatal(err)
	}
	if got, ok := other.Result(); ok {
		t.Errorf("kept %s without KeepResult", got)
	}
}

func TestTapRecordsChallenge(t *testing.T) {
	const challenge = `Bearer error="insufficient_scope", scope="a b"`
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", challenge)
		http.Error(w, "insufficient scope", http.StatusForbidden)
	})
	tap := &Tap{Base: srv.Client().Transport, Observer: NewObserver("srv", nil), Observe: true}
	ctx, rs := TrackRequest(t.Context())
	if _, _, err := post(t, ctx, tap, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`); err != nil {
		t.Fatal(err)
	}
	if got := rs.Challenge(); rs.Status() != http.StatusForbidden || len(got) != 1 || got[0] != challenge {
		t.Errorf("status %d, challenge %q", rs.Status(), got)
	}
}

// TestObservedTransportKeepsResult: over a connection, the response to a
// tracked call is matched by id, even with other calls in flight.
func TestObservedTransportKeepsResult(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	ct, st := mcp.NewInMemoryTransports()
	client, err := (&ObservedTransport{Inner: ct}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := st.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()

	tracked, rs := TrackRequest(ctx)
	rs.KeepResult("tools/call")
	doneCtx, done := TrackRequest(ctx)
	done.KeepResult("tools/call")
	calls := []struct {
		ctx   context.Context
		req   *jsonrpc.Request
		reply string
	}{
		{ctx, request(t, 1, "tools/call", `{}`), `{"content":[],"structuredContent":{"other":1}}`},
		{tracked, request(t, 2, "tools/call", `{}`), preciseResult},
		{doneCtx, request(t, 3, "tools/call", `{}`), `{"late":true}`},
		{tracked, request(t, 4, "tools/list", `{}`), listAnswer}, // not the call
	}
	// The in-memory pipe blocks each write until the other side reads.
	written := make(chan error, 1)
	go func() {
		for _, c := range calls {
			if err := client.Write(c.ctx, c.req); err != nil {
				written <- err
				return
			}
		}
		written <- nil
	}()
	for range calls {
		if _, err := server.Read(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	done.Done() // this call returned before its answer came
	answered := make(chan error, 1)
	go func() {
		for i := len(calls) - 1; i >= 0; i-- { // in reverse order
			if err := server.Write(ctx, response(calls[i].req, calls[i].reply)); err != nil {
				answered <- err
				return
			}
		}
		answered <- nil
	}()
	for range calls {
		if _, err := client.Read(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	if got, ok := rs.Result(); !ok || string(got) != preciseResult {
		t.Errorf("Result() = %s, %v; want %s", got, ok, preciseResult)
	}
	if got, ok := done.Result(); ok {
		t.Errorf("a call that was done kept %s", got)
	}
	oc := client.(*observedConn)
	if n := oc.calls.n.Load(); n != 0 || len(oc.calls.m) != 0 {
		t.Errorf("%d calls still awaited", n)
	}
}

func TestMember(t *testing.T) {
	for _, tc := range []struct {
		obj, key, want string
		ok             bool
	}{
		{preciseResult, "structuredContent", `{"z":1,"id":12345678901234567890,"a":9007199254740993}`, true},
		{` { "a" : [1, "}", {"b":"\"]"}] , "b":2 } `, "a", `[1, "}", {"b":"\"]"}]`, true},
		{`{"a":1,"b":-2.5e3}`, "b", `-2.5e3`, true},
		{`{"a":1,"a":2}`, "a", "", false},
		{`{"a":1}`, "b", "", false},
		{`{"\u0061":1}`, "a", "", false},
		{`{"a":1`, "a", "", false},
		{`{"a":1} x`, "a", "", false},
		{`[1]`, "a", "", false},
		{`{}`, "a", "", false},
		{``, "a", "", false},
	} {
		got, ok := Member([]byte(tc.obj), tc.key)
		if string(got) != tc.want || ok != tc.ok {
			t.Errorf("Member(%s, %q) = %s, %v; want %s, %v", tc.obj, tc.key, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzMember checks the scanner against encoding/json: a member it finds
// in valid JSON is the member a decoder finds, byte for byte once
// compacted, and nothing panics on any input.
func FuzzMember(f *testing.F) {
	for _, s := range []string{
		preciseResult, `{"jsonrpc":"2.0","id":7,"result":{"a":1}}`, `{"a":"\\\"","b":[{}]}`,
		`{"a":1,"a":2}`, `{"a" :  true , "b":null}`, `{"a":"}`, `{"a":[}`, `{`, `"x"`,
	} {
		f.Add([]byte(s), "a")
	}
	f.Fuzz(func(t *testing.T, data []byte, key string) {
		got, ok := Member(data, key)
		_, _ = responseKind(data)
		_, _ = callOf(data)
		if !ok || !json.Valid(data) || !utf8.ValidString(key) {
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(data, &m) != nil {
			t.Fatalf("Member found %q in %q, which is not an object", key, data)
		}
		want, found := m[key]
		if !found {
			t.Fatalf("Member found %q = %s in %s; encoding/json finds none", key, got, data)
		}
		var a, b bytes.Buffer
		if json.Compact(&a, got) != nil || json.Compact(&b, want) != nil || a.String() != b.String() {
			t.Fatalf("Member(%s, %q) = %s; encoding/json: %s", data, key, got, want)
		}
	})
}

// chunked reads its string in pieces of n bytes.
type chunked struct {
	s string
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	k := min(c.n, len(p), len(c.s))
	copy(p, c.s[:k])
	c.s = c.s[k:]
	return k, nil
}

func (c *chunked) Close() error { return nil }

// TestSSETapChunking: events are found however the stream is cut into
// reads: CRLF and LF line ends, comments, other fields, data lines with
// and without their space, and data split over several lines.
func TestSSETapChunking(t *testing.T) {
	stream := ": a comment\r\n" +
		"event: message\r\nid: 1\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\r\n\r\n" +
		"data:{\"jsonrpc\":\"2.0\",\n" +
		"data: \"id\":7,\n" +
		"data:\n" +
		"data: \"result\":" + preciseResult + "}\n\n"
	wantResult := preciseResult
	for _, n := range []int{1, 2, 3, 5, 7, 64, len(stream)} {
		var trace bytes.Buffer
		obs := NewObserver("srv", slog.New(slog.NewTextHandler(&trace, &slog.HandlerOptions{Level: slog.LevelDebug})))
		_, rs := TrackRequest(t.Context())
		rs.KeepResult("tools/call")
		rs.sent(parseID([]byte("7")), nil)
		tap := &sseTap{ReadCloser: &chunked{s: stream, n: n}, obs: obs, keep: rs}
		if _, err := io.Copy(io.Discard, tap); err != nil {
			t.Fatal(err)
		}
		if got, ok := rs.Result(); !ok || string(got) != wantResult {
			t.Errorf("reads of %d bytes: Result() = %s, %v", n, got, ok)
		}
		if got := bytes.Count(trace.Bytes(), []byte("mcp recv")); got != 2 {
			t.Errorf("reads of %d bytes: %d messages observed, want 2:\n%s", n, got, trace.String())
		}
	}
}

func TestSpool(t *testing.T) {
	var s spool
	var want []byte
	for i := range 3000 {
		p := bytes.Repeat([]byte{byte('a' + i%26)}, i%700)
		s.write(p)
		want = append(want, p...)
	}
	if s.len() != len(want) || !bytes.Equal(s.bytes(), want) || !bytes.Equal(s.bytes(), want) {
		t.Fatalf("spool of %d bytes differs", len(want))
	}
	if len(s.first()) != len(want) {
		t.Error("bytes did not join the blocks")
	}
	s.reset()
	s.write([]byte("x\r"))
	s.trimByte('\r')
	if string(s.bytes()) != "x" || s.len() != 1 {
		t.Errorf("after reset and trim: %q", s.bytes())
	}
}

package wire

//lint:file-ignore SA1019 logging lives in the handshake era, which these messages come from

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/order"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// decodeLog decodes msg as go-sdk's client does, and returns its log
// message params.
func decodeLog(t testing.TB, msg []byte) (*mcp.LoggingMessageParams, bool) {
	t.Helper()
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return nil, false
	}
	req, ok := m.(*jsonrpc.Request)
	if !ok || req.Method != "notifications/message" {
		return nil, false
	}
	var p mcp.LoggingMessageParams
	if json.Unmarshal(req.Params, &p) != nil {
		return nil, false
	}
	return &p, true
}

// TestTagLog: a log message read on a request's stream is tagged with
// the stream in its params' _meta, whatever _meta the server sent (none,
// an object, empty, null); taking the tag out gives the stream and
// the _meta as sent, and the trace's bytes are the server's; anything
// but a log message, or one whose members cannot be told apart, is left
// as it is.
func TestTagLog(t *testing.T) {
	m := order.New()
	st := order.StreamsFrom(t.Context()).On(m)
	tagged := []string{
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"_meta":{"a":1},"level":"info","data":"x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","_meta":{},"data":"x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","_meta":null}}`,
		`{"params": { "_meta" : { "b" : [1] } , "data" : "x" }, "method" : "notifications/message", "jsonrpc":"2.0"}`,
	}
	for _, msg := range tagged {
		out, ok := tagLog(nil, []byte(msg), st)
		if !ok {
			t.Errorf("not tagged: %s", msg)
			continue
		}
		if got := untagLog(out, m); string(got) != msg {
			t.Errorf("the trace shows %s, the server sent %s", got, msg)
		}
		want, _ := decodeLog(t, []byte(msg))
		p, ok := decodeLog(t, out)
		if !ok {
			t.Errorf("tagged %s does not decode", out)
			continue
		}
		got, meta, ok := m.Untag(p.Meta)
		p.Meta = meta
		if !ok || got != st {
			t.Errorf("tag of %s: %v %v, want %v", out, got, ok, st)
		}
		if !reflect.DeepEqual(p, want) {
			t.Errorf("untagged %+v, the server sent %+v", p, want)
		}
		if _, _, ok := order.New().Untag(p.Meta); ok {
			t.Errorf("another connection took the tag of %s", out)
		}
	}
	untouched := []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`,
		`{"jsonrpc":"2.0","method":"notifications\/message","params":{"level":"info"}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"\u005fmeta":{},"level":"info"}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"_meta":"x","level":"info"}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":[]}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"_meta":{"b":1},"_meta":null}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{},"params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","method":"notifications/message","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":`,
	}
	for _, msg := range untouched {
		if out, ok := tagLog(nil, []byte(msg), st); ok {
			t.Errorf("tagged %s: %s", msg, out)
		}
	}
}

// TestAppendTaggedEvent: the tagged message replaces the event's data
// lines, a data line for each of its lines, and its other lines stay.
func TestAppendTaggedEvent(t *testing.T) {
	ev := "id: 7\nevent: message\ndata: {\"a\":\ndata: 1}\nretry: 5"
	got := string(appendTaggedEvent(nil, []byte(ev), []byte("{\"a\":\n1}")))
	want := "id: 7\nevent: message\nretry: 5\ndata: {\"a\":\ndata: 1}\n"
	if got != want {
		t.Errorf("event %q, want %q", got, want)
	}
}

// FuzzTagLog: whatever a server sends, tagging never panics; a tagged
// message decodes as go-sdk decodes the message sent, with the tag in
// its _meta, which taking out gives back the stream and the _meta sent;
// the trace shows the bytes sent.
func FuzzTagLog(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"_meta":{"a":1},"level":"info"}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"_meta":null,"_meta":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"mcpadapter-order-x-stream"}}`,
	} {
		f.Add([]byte(s))
	}
	m := order.New()
	st := order.StreamsFrom(f.Context()).On(m)
	f.Fuzz(func(t *testing.T, msg []byte) {
		out, ok := tagLog(nil, msg, st)
		if !ok {
			return
		}
		if got := untagLog(out, m); !bytes.Equal(got, msg) {
			t.Fatalf("the trace shows %s, the server sent %s", got, msg)
		}
		if bytes.Count(bytes.ToLower(msg), []byte("_meta")) != bytes.Count(msg, []byte("_meta")) {
			return // encoding/json matches "_META" to _meta; go-sdk's decoder does not
		}
		want, wantOK := decodeLog(t, msg)
		p, ok := decodeLog(t, out)
		if ok != wantOK {
			t.Fatalf("tagged %s decodes %v, sent %s %v", out, ok, msg, wantOK)
		}
		if !ok {
			return
		}
		got, meta, tok := m.Untag(p.Meta)
		p.Meta = meta
		if !tok || got != st {
			t.Fatalf("tag of %s: %v %v", out, got, tok)
		}
		if !reflect.DeepEqual(p, want) && !strings.Contains(string(msg), m.TagKey()) {
			t.Fatalf("untagged %+v, sent %+v", p, want)
		}
	})
}

// TestTagLogEventLines: a log message in several data lines, tagged on a
// request's stream, is the message go-sdk joins from the lines sent, with
// the tag: one whose lines join into no JSON message (a line feed inside
// a string) stays no message, where it would fail the connection
// untagged, and a valid one decodes to the message sent.
func TestTagLogEventLines(t *testing.T) {
	m := order.New()
	st := order.StreamsFrom(t.Context()).On(m)
	for _, tc := range []struct {
		lines []string
		valid bool
	}{
		{[]string{`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"a`, `b"}}`}, false},
		{[]string{`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"a\r`, `b"}}`}, false},
		{[]string{`{"jsonrpc":"2.0","method":"notifications/message",`, `"params":{"level":"info",`, `"data":"a b"}}`}, true},
	} {
		var ev strings.Builder
		ev.WriteString("id: 4\n")
		for _, l := range tc.lines {
			ev.WriteString("data: " + l + "\n")
		}
		body := ev.String() + "\n" + "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
		s := newSSELimit(io.NopCloser(strings.NewReader(body)), 1<<20, nil, nil)
		s.marks, s.stream = m, st
		out, err := io.ReadAll(s)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := bytes.Cut(out, []byte("\n\n"))
		data, _ := eventData(first, nil)
		sent := strings.Join(tc.lines, "\n")
		if _, err := jsonrpc.DecodeMessage([]byte(sent)); (err == nil) != tc.valid {
			t.Fatalf("the message sent decodes: %v", err)
		}
		p, ok := decodeLog(t, data)
		if ok != tc.valid {
			t.Errorf("%q read as %q: decodes %v, the message sent %v", body, first, ok, tc.valid)
			continue
		}
		if !ok {
			continue
		}
		want, _ := decodeLog(t, []byte(sent))
		got, meta, tok := m.Untag(p.Meta)
		p.Meta = meta
		if !tok || got != st || !reflect.DeepEqual(p, want) {
			t.Errorf("%q read as %+v (tag %v), sent %+v", first, p, tok, want)
		}
	}
}

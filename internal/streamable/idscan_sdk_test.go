package streamable

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// sdkReadsAs checks out, the translation of in, against go-sdk's own
// decoder: a response that go-sdk reads as the call's (from) reads as
// go-sdk's id (to) after, and one with go-sdk's id as the call's, with the
// same result or error; any other message is left byte for byte.
func sdkReadsAs(t *testing.T, in, out []byte, from, to string) {
	t.Helper()
	fromID, toID := mustID(t, from), mustID(t, to)
	before, err := jsonrpc.DecodeMessage(in)
	resp, isResp := before.(*jsonrpc.Response)
	if err != nil || !isResp || (resp.ID != fromID && resp.ID != toID) {
		if !bytes.Equal(in, out) {
			t.Errorf("%s: not the call's answer in go-sdk's reading, but changed to %s", in, out)
		}
		return
	}
	// The call's id becomes go-sdk's, and go-sdk's the call's.
	want := toID
	if resp.ID == toID {
		want = fromID
	}
	after, err := jsonrpc.DecodeMessage(out)
	r2, ok := after.(*jsonrpc.Response)
	if err != nil || !ok || r2.ID != want || !bytes.Equal(r2.Result, resp.Result) || (r2.Error == nil) != (resp.Error == nil) {
		t.Errorf("%s: a response with the call's id or go-sdk's, translated to %s (%v)", in, out, err)
	}
}

func mustID(t *testing.T, s string) jsonrpc.ID {
	t.Helper()
	m, err := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":` + s + `,"result":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	return m.(*jsonrpc.Response).ID
}

// go-sdk's decoder matches keys exactly (no case folding) after undoing
// escapes: "\u0069d" and "i\u0064" are the id, "ID" and "Id" are not. The
// translation reads keys the same way, and never changes a server's
// request that happens to carry the call's id (before or after its method).
func TestIDTranslatorReadsKeysAsSDK(t *testing.T) {
	const from, to = "1000000000000001", "3"
	for _, msg := range []string{
		`{"jsonrpc":"2.0","\u0069d":` + from + `,"result":{}}`,
		`{"jsonrpc":"2.0","i\u0064":` + from + `,"result":{}}`,
		`{"jsonrpc":"2.0","\u0069\u0064":` + from + `,"result":{}}`,
		`{"jsonrpc":"2.0","result":{},"\u0069d" : ` + from + `.0}`,
		`{"jsonrpc":"2.0","ID":` + from + `,"result":{}}`,
		`{"jsonrpc":"2.0","Id":` + from + `,"id":7,"result":{}}`,
		`{"jsonrpc":"2.0","id":` + from + `,"method":"roots/list"}`,
		`{"jsonrpc":"2.0","method":"roots/list","id":` + from + `}`,
		`{"jsonrpc":"2.0","id":` + from + `,"params":{"a":"` + strings.Repeat("y", 300) + `"},"method":"sampling/createMessage"}`,
		`{"jsonrpc":"2.0","id":` + from + `,"result":{"id":` + from + `}}`,
	} {
		for _, stream := range []bool{false, true} {
			body := msg
			if stream {
				body = "data: " + msg + "\n\n"
			}
			src := io.NopCloser(strings.NewReader(body))
			size := translateWindow
			if stream {
				size = 16
			}
			tr := &idTranslator{src: bufio.NewReaderSize(src, size), body: src, stream: stream, start: true, scan: idScanner{from: from, to: to}}
			got, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if stream {
				if !bytes.HasPrefix(got, []byte("data: ")) || !bytes.HasSuffix(got, []byte("\n\n")) {
					t.Fatalf("%q became %q", body, got)
				}
				got = got[len("data: ") : len(got)-2]
			}
			sdkReadsAs(t, []byte(msg), got, from, to)
		}
	}
}

// A data line of a multi-line event that ends in a nested "id":<the
// call's id>} is not the message's end: it is left as it is.
func TestIDTranslatorNestedIDAtLineEnd(t *testing.T) {
	const from = "1000000000000001"
	in := "data: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"a\":{\"id\":" + from + "}\ndata: }}\n\n"
	src := io.NopCloser(strings.NewReader(in))
	tr := &idTranslator{src: bufio.NewReaderSize(src, 16), body: src, stream: true, start: true, scan: idScanner{from: from, to: "3"}}
	got, err := io.ReadAll(tr)
	if err != nil || string(got) != in {
		t.Errorf("%q became %q (%v)", in, got, err)
	}
}

// recordRT records the bodies of the requests it gets.
type recordRT struct{ bodies []string }

func (r *recordRT) RoundTrip(req *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(req.Body)
	r.bodies = append(r.bodies, string(b))
	return &http.Response{StatusCode: http.StatusAccepted, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
}

// go-sdk's cancellation of the handed-over call (go-sdk's id 3) reaches
// the server with the fast path's id; a cancellation of any other request
// (30, 33, 3 in a nested member) reaches it as go-sdk wrote it.
func TestHandOffCancellationWholeID(t *testing.T) {
	const ours = "1000000000000001"
	cancel := func(params string) string {
		return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":` + params + `}`
	}
	for _, c := range []struct{ in, want string }{
		{cancel(`{"requestId":3,"reason":"x"}`), cancel(`{"requestId":` + ours + `,"reason":"x"}`)},
		{cancel(`{"reason":"x","requestId" : 3}`), cancel(`{"reason":"x","requestId" : ` + ours + `}`)},
		{cancel(`{"requestId":30,"reason":"x"}`), cancel(`{"requestId":30,"reason":"x"}`)},
		{cancel(`{"requestId":33}`), cancel(`{"requestId":33}`)},
		{cancel(`{"requestId":"3"}`), cancel(`{"requestId":"3"}`)},
		{cancel(`{"reason":"{\"requestId\":3}","requestId":4}`), cancel(`{"reason":"{\"requestId\":3}","requestId":4}`)},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"requestId":3}}`, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"requestId":3}}`},
	} {
		rec := &recordRT{}
		h := &HandOff{ours: ours, sdk: "3"}
		req, _ := http.NewRequestWithContext(WithHandOff(t.Context(), h), http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(c.in))
		resp, err := Transport{Next: rec}.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if len(rec.bodies) != 1 || rec.bodies[0] != c.want {
			t.Errorf("%s:\n sent %q\n want %s", c.in, rec.bodies, c.want)
		}
	}
}

// The call's id in the first data line of a message of several lines is
// translated, and everything around it kept in order.
func TestIDTranslatorIDBeforeLineEnd(t *testing.T) {
	const from = "1000000000000001"
	in := "data: {\"jsonrpc\":\"2.0\",\"id\":" + from + ",\ndata: \"result\":{}}\n\n"
	want := "data: {\"jsonrpc\":\"2.0\",\"id\":3,\ndata: \"result\":{}}\n\n"
	src := io.NopCloser(strings.NewReader(in))
	tr := &idTranslator{src: bufio.NewReaderSize(src, 16), body: src, stream: true, start: true, scan: idScanner{from: from, to: "3"}}
	got, err := io.ReadAll(tr)
	if err != nil || string(got) != want {
		t.Errorf("%q became %q (%v)", in, got, err)
	}
}

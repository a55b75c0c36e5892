package streamable

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// fuzzCallID is the id of the call the fuzzed answers answer.
const fuzzCallID = 100_000_000_000_007

// referenceSSE returns the first message of an event stream as go-sdk's
// client reads it (scanEventsLimited, processStream): events end at a
// blank line, data lines are joined with newlines, events without data or
// with a name other than "message" are skipped; ok is false when go-sdk
// would fail or find none.
func referenceSSE(body []byte) (msg []byte, ok bool) {
	var data [][]byte
	name := ""
	lines := bytes.Split(body, []byte("\n"))
	for i, l := range lines {
		l = bytes.TrimRight(l, "\r")
		last := i == len(lines)-1
		if len(l) > 0 {
			key, value, found := bytes.Cut(l, []byte(":"))
			if !found {
				return nil, false
			}
			switch string(key) {
			case "data":
				data = append(data, bytes.TrimSpace(value))
			case "event":
				name = strings.TrimSpace(string(value))
			}
			if !last {
				continue
			}
		}
		d := bytes.Join(data, []byte("\n"))
		if len(d) > 0 && (name == "" || name == "message") {
			return d, true
		}
		data, name = nil, ""
	}
	return nil, false
}

// The fast path's reading of an answer agrees with go-sdk's: when it takes
// a result or an error from an event stream or a JSON body, go-sdk's
// decoder finds the same response to the call there (and otherwise the
// call is handed over to go-sdk, which reads it itself).
func FuzzAnswer(f *testing.F) {
	id := strconv.Itoa(fuzzCallID)
	for _, s := range []string{
		"id: 1\ndata: \n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{\"content\":[]}}\n\n",
		"data: {\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"error\":{\"code\":-32000,\"message\":\"boom\"}}\n\n",
		"event: other\ndata: {}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{}}\r\n\r\n",
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{}}\n\n",
		"data: {\"jsonrpc\":\"2.0\",\"id\":" + id + ",\ndata: \"result\":{}}\n\n",
		"{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{\"x\":1}}",
		"no colon\n\n",
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, body []byte, stream bool) {
		a := fastAnswer{id: fuzzCallID, body: bytes.NewReader(body), limit: 1 << 20}
		var msg []byte
		var ok bool
		if stream {
			a.readSSE(a.limit)
			msg, ok = referenceSSE(body)
		} else {
			a.readJSON(-1, a.limit)
			msg, ok = body, true
		}
		if a.result == nil && a.err == nil {
			return // handed over
		}
		if !ok {
			t.Fatalf("the fast path took an answer from %q; go-sdk finds no message there", body)
		}
		m, err := jsonrpc.DecodeMessage(msg)
		if err != nil {
			t.Fatalf("the fast path took an answer from %q; go-sdk cannot decode it: %v", msg, err)
		}
		resp, isResp := m.(*jsonrpc.Response)
		if !isResp || resp.ID.Raw() != float64(fuzzCallID) && resp.ID.Raw() != int64(fuzzCallID) {
			t.Fatalf("the fast path took an answer from %q; go-sdk reads %#v", msg, m)
		}
		switch {
		case a.result != nil && (resp.Error != nil || !bytes.Equal(a.result, resp.Result)):
			t.Fatalf("result %s; go-sdk reads result %s, error %v", a.result, resp.Result, resp.Error)
		case a.err != nil && (resp.Error == nil || !strings.Contains(a.err.Error(), resp.Error.Error())):
			t.Fatalf("error %v; go-sdk reads result %s, error %v", a.err, resp.Result, resp.Error)
		}
	})
}

package gateway

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestBodyRequestID(t *testing.T) {
	long := strings.Repeat("x", 3000)
	for _, tt := range []struct {
		name, body, method, want string
	}{
		{"number", `{"jsonrpc":"2.0","id":42,"method":"tools/list"}`, "tools/list", "42"},
		{"string", `{"jsonrpc":"2.0","id":"a\"b","method":"tools/call","params":{}}`, "tools/call", `a"b`},
		{"method first", ` {"method":"ping","jsonrpc":"2.0","id":-7}`, "ping", "-7"},
		{"other method", `{"id":1,"method":"ping"}`, "tools/list", ""},
		{"notification", `{"method":"notifications/initialized"}`, "notifications/initialized", ""},
		{"null id", `{"id":null,"method":"ping"}`, "ping", ""},
		{"object id", `{"id":{"a":1},"method":"ping"}`, "ping", ""},
		{"cut after the id", `{"id":9,"method":"tools/call","params":{"arguments":{"text":"` + strings.Repeat("y", maxCopiedBody), "tools/call", "9"},
		{"not json", `{id:1`, "ping", ""},
		{"long id", `{"jsonrpc":"2.0","id":"` + long + `","method":"ping"}`, "ping", long[:maxTelemetryURI]},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`, "tools/list", "2"},
		{"no version tag (go-sdk refuses it)", `{"id":3,"method":"ping"}`, "ping", ""},
		{"fraction", `{"jsonrpc":"2.0","id":4.5,"method":"ping"}`, "ping", "4"},
		{"cut in a number id", `{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"text":"` + strings.Repeat("y", maxCopiedBody-84) + `"}},"id":1234567890123}`, "tools/call", ""},
		{"batch, one method twice", `[{"id":1,"method":"ping"},{"id":2,"method":"ping"}]`, "ping", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := &bodyCopy{ReadCloser: nopCloser{strings.NewReader(tt.body)}}
			buf := make([]byte, 100)
			for {
				if _, err := b.Read(buf); err != nil {
					break
				}
			}
			if len(b.buf) > maxCopiedBody {
				t.Fatalf("kept %d bytes", len(b.buf))
			}
			if got := b.requestID(tt.method); got != tt.want {
				t.Errorf("requestID(%q) = %q; want %q", tt.method, got, tt.want)
			}
		})
	}
}

type nopCloser struct{ *strings.Reader }

func (nopCloser) Close() error { return nil }

// TestStdioIDsBounded: the ids of requests whose handlers never take
// them (go-sdk refused them first) are dropped past maxStdioIDs.
func TestStdioIDsBounded(t *testing.T) {
	var s stdioIDs
	var first *mcp.RequestExtra
	for i := range 3 * maxStdioIDs {
		id, err := jsonrpc.MakeID(float64(i))
		if err != nil {
			t.Fatal(err)
		}
		r := &jsonrpc.Request{ID: id, Method: "no/such/method"}
		s.put(r)
		if i == 0 {
			first = r.Extra.(*mcp.RequestExtra)
		}
	}
	if len(s.ids) != maxStdioIDs {
		t.Errorf("%d ids kept; want %d", len(s.ids), maxStdioIDs)
	}
	if got := s.take(first); got != "" {
		t.Errorf("the oldest id is still kept: %q", got)
	}
	id, _ := jsonrpc.MakeID("last")
	r := &jsonrpc.Request{ID: id, Method: "tools/list"}
	s.put(r)
	if got := s.take(r.Extra.(*mcp.RequestExtra)); got != "last" {
		t.Errorf("take = %q; want %q", got, "last")
	}
	if got := s.take(r.Extra.(*mcp.RequestExtra)); got != "" {
		t.Errorf("a second take = %q", got)
	}
}

// TestTelemetryRequestIDAsAnswered: the id on a request's operation is
// the id go-sdk answers the request with, whatever JSON the client wrote
// it in (a number with a fraction or an exponent, a key given twice, a
// key written with escapes), or none; never another.
func TestTelemetryRequestIDAsAnswered(t *testing.T) {
	tel := &recordingTelemetry{}
	_, url := startGateway(t, []Server{{Name: "up", Target: testserver.New(testserver.Options{})}}, &Options{Telemetry: tel})
	r := newRawRPC(t, url, v1125, "", `{}`)
	const list = `"method":"tools/list","params":{}`
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1e2,` + list + `}`,
		`{"jsonrpc":"2.0","id":2.0,` + list + `}`,
		`{"jsonrpc":"2.0","id":7.9,` + list + `}`,
		`{"jsonrpc":"2.0","id":-3.5e1,` + list + `}`,
		`{"jsonrpc":"2.0","id":11,` + list + `,"id":12}`,
		`{"jsonrpc":"2.0","id":"a",` + list + `,"id":"b"}`,
		`{"jsonrpc":"2.0","\u0069d":13,` + list + `}`,
		`{"jsonrpc":"2.0","id":14,"ID":15,` + list + `}`,
		`{"jsonrpc":"2.0","id":16,"method":"ping",` + list + `}`,
	} {
		n := len(tel.find("tools/list"))
		answered := rawAnswerID(t, r, body)
		ops := tel.find("tools/list")
		if len(ops) != n+1 {
			if len(ops) != n || answered != "" {
				t.Errorf("%s: %d operations of tools/list; the answer's id %q", body, len(ops)-n, answered)
			}
			continue
		}
		if got := ops[n].op.RequestID; got != "" && got != answered {
			t.Errorf("%s: the operation's id is %q; go-sdk answered id %q", body, got, answered)
		}
	}
}

// rawAnswerID posts body in r's session and returns the id of the answer
// as text (a string's characters, a number's JSON), "" when none came.
func rawAnswerID(t *testing.T, r *rawRPC, body string) string {
	t.Helper()
	resp := r.post(testCtx(t, 30*time.Second), "", body)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "data: ")
		var m rpcReply
		if json.Unmarshal([]byte(line), &m) != nil || m.Method != "" || len(m.ID) == 0 {
			continue
		}
		var s string
		if json.Unmarshal(m.ID, &s) == nil {
			return s
		}
		return string(m.ID)
	}
	return ""
}

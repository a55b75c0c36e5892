package gateway

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestBodyRequestID(t *testing.T) {
	long := strings.Repeat("x", 3000)
	for _, tt := range []struct {
		name, body, method, want string
	}{
		{"number", `{"jsonrpc":"2.0","id":42,"method":"tools/list"}`, "tools/list", "42"},
		{"string", `{"id":"a\"b","method":"tools/call","params":{}}`, "tools/call", `a"b`},
		{"method first", ` {"method":"ping","jsonrpc":"2.0","id":-7}`, "ping", "-7"},
		{"other method", `{"id":1,"method":"ping"}`, "tools/list", ""},
		{"notification", `{"method":"notifications/initialized"}`, "notifications/initialized", ""},
		{"null id", `{"id":null,"method":"ping"}`, "ping", ""},
		{"object id", `{"id":{"a":1},"method":"ping"}`, "ping", ""},
		{"cut after the id", `{"id":9,"method":"tools/call","params":{"arguments":{"text":"` + strings.Repeat("y", maxCopiedBody), "tools/call", "9"},
		{"not json", `{id:1`, "ping", ""},
		{"long id", `{"id":"` + long + `","method":"ping"}`, "ping", long[:maxTelemetryURI]},
		{"batch", `[{"id":1,"method":"ping"},{"id":2,"method":"tools/list"}]`, "tools/list", "2"},
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

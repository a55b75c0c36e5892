package gateway

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzTaskID: parseTaskID accepts exactly the ids the gateway makes (a
// server's name, a dot, 32 hex digits) and names their server.
func FuzzTaskID(f *testing.F) {
	for _, s := range []string{"core.0123456789abcdef0123456789abcdef", "a.b", "", ".", "x..0123456789abcdef0123456789abcdef", "core.0123456789ABCDEF0123456789abcdef", "ext.0123456789abcdef0123456789abcdef\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		server, ok := parseTaskID(id)
		if !ok {
			return
		}
		key, found := bytes.CutPrefix([]byte(id), []byte(server+"."))
		if !found || len(key) != 32 || len(server) == 0 || len(server) > 64 {
			t.Fatalf("accepted %q: server %q", id, server)
		}
		for _, c := range key {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				t.Fatalf("accepted %q", id)
			}
		}
	})
}

// FuzzLiftTask: the "task" member of a tools/call moves into _meta, where
// coreAsk finds it; the body is otherwise the same JSON, and a body that
// is not such a call is left as it is.
func FuzzLiftTask(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{},"task":{"ttl":5000}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","task":{},"_meta":{"a":1}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","task":null}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","task":5,"_meta":null}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"task"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","task":{},"_meta":{"io.mcpadapter.gateway/task":7}}}`,
		`[{"method":"tools/call","params":{"task":{}}}]`,
		`{"method":"tools/call","params":{"task":{},"_meta":[]}}`,
		`not json "task" tools/call`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		out := liftTaskMember(body)
		if bytes.Equal(out, body) {
			return
		}
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Task json.RawMessage `json:"task"`
				Meta map[string]any  `json:"_meta"`
			} `json:"params"`
		}
		if err := json.Unmarshal(out, &msg); err != nil {
			t.Fatalf("lifted %q into invalid JSON %q: %v", body, out, err)
		}
		if msg.Method != "tools/call" || msg.Params.Task != nil {
			t.Fatalf("lifted %q into %q", body, out)
		}
		if asked, _ := coreAsk(msg.Params.Meta); !asked {
			t.Fatalf("lifted %q: coreAsk finds no task in %q", body, out)
		}
	})
}

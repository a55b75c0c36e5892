package ui_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/ui"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCollision: two servers whose tools reach a model under one name
// (a_b + c and a + b_c are both a_b_c). The page gets the error naming
// both, and each server's tools, the two contested ones marked; each
// stays callable.
func TestCollision(t *testing.T) {
	rec := ui.NewRecorder()
	tool := func(name string) *mcp.Tool {
		return &mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}
	}
	s := newSession(t, rec, "test", nil, named{name: "a_b", target: echoServer(tool("c"), tool("d"))}, named{name: "a", target: echoServer(tool("b_c"))})
	srv := startUI(t, s, rec, nil)
	in := inspectorOf(t, srv)
	in.login(t)
	_, body := in.request(t, "GET", "/api/state", nil, "")
	var st struct {
		ListError  *struct{ Error string }
		Collisions []string
		Tools      []struct {
			Name, Server string
			Collides     bool
		}
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	if st.ListError == nil || len(st.Collisions) != 1 || st.Collisions[0] != "a_b_c" {
		t.Fatalf("list error %v, collisions %v", st.ListError, st.Collisions)
	}
	marked := map[string]bool{}
	for _, tl := range st.Tools {
		marked[tl.Server+"/"+tl.Name] = tl.Collides
	}
	want := map[string]bool{"a_b/c": true, "a_b/d": false, "a/b_c": true}
	if len(marked) != len(want) {
		t.Fatalf("tools %v, want %v", marked, want)
	}
	for k, v := range want {
		if marked[k] != v {
			t.Errorf("%s marked %v, want %v", k, marked[k], v)
		}
	}
	if resp, body := in.request(t, "POST", "/api/call", in.origin(), `{"server":"a","tool":"b_c","args":{}}`); resp.StatusCode != 200 {
		t.Errorf("calling a contested tool: %d %s", resp.StatusCode, body)
	}
}

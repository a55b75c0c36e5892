package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawRPC sends one JSON-RPC request to the gateway, as principal who, of
// protocol v (a session's id for 2025-11-25, none for 2026-07-28), and
// returns the response's result or error; onRequest answers the requests
// the gateway sends on the response's stream.
type rawRPC struct {
	t       *testing.T
	url, v  string
	who     string
	session string
}

func newRawRPC(t *testing.T, url, v, who, caps string) *rawRPC {
	r := &rawRPC{t: t, url: url, v: v, who: who}
	if v == v0728 {
		return r
	}
	res, _ := r.do(testCtx(t, 10*time.Second), "initialize", `{"protocolVersion":"`+v+`","capabilities":`+caps+`,"clientInfo":{"name":"raw","version":"1"}}`, nil)
	if !strings.Contains(string(res), `"tasks":{"cancel":{},"list":{},"requests":{"tools":{"call":{}}}}`) {
		t.Fatalf("initialize declares no tasks capability: %s", res)
	}
	r.notify(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return r
}

type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (r *rawRPC) post(ctx context.Context, method, body string) *http.Response {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+r.who)
	if r.session != "" {
		req.Header.Set("Mcp-Session-Id", r.session)
	}
	if r.v != "" && r.session != "" || r.v == v0728 {
		req.Header.Set("Mcp-Protocol-Version", r.v)
	}
	if r.v == v0728 && method != "" {
		req.Header.Set("Mcp-Method", method)
		var m struct {
			Params struct {
				Name string `json:"name"`
				URI  string `json:"uri"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(body), &m) == nil && m.Params.Name != "" {
			req.Header.Set("Mcp-Name", m.Params.Name)
		} else if m.Params.URI != "" {
			req.Header.Set("Mcp-Name", m.Params.URI) // resources/read
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		r.session = id
	}
	return resp
}

func (r *rawRPC) notify(body string) {
	resp := r.post(testCtx(r.t, 10*time.Second), "", body)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// do sends method with params and returns its reply; a request of the
// gateway's on the stream is answered with onRequest's result.
func (r *rawRPC) do(ctx context.Context, method, params string, onRequest func(method string, params json.RawMessage) string) (json.RawMessage, *rpcReply) {
	if r.v == v0728 {
		var p map[string]any
		_ = json.Unmarshal([]byte(params), &p)
		if p == nil {
			p = map[string]any{}
		}
		meta, _ := p["_meta"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
		}
		meta[mcp.MetaKeyProtocolVersion] = v0728
		meta[mcp.MetaKeyClientInfo] = map[string]any{"name": "raw", "version": "1"}
		if _, ok := meta[mcp.MetaKeyClientCapabilities]; !ok {
			meta[mcp.MetaKeyClientCapabilities] = map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
		}
		p["_meta"] = meta
		b, _ := json.Marshal(p)
		params = string(b)
	}
	resp := r.post(ctx, method, `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`)
	defer resp.Body.Close()
	handle := func(line string) (*rpcReply, bool) {
		var m rpcReply
		if json.Unmarshal([]byte(line), &m) != nil {
			return nil, false
		}
		if m.Method != "" && len(m.ID) > 0 && onRequest != nil {
			r.notify(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + onRequest(m.Method, m.Params) + `}`)
			return nil, false
		}
		if m.Method != "" {
			return nil, false
		}
		return &m, true
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		b, _ := io.ReadAll(resp.Body)
		m, _ := handle(string(b))
		if m == nil {
			r.t.Fatalf("%s: %s: %s", method, resp.Status, b)
		}
		return m.Result, m
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if m, ok := handle(line); ok {
			return m.Result, m
		}
	}
	r.t.Fatalf("%s: %s: the stream ended without an answer", method, resp.Status)
	return nil, nil
}

// call sends method and fails the test on an error answer.
func (r *rawRPC) call(method, params string) map[string]any {
	r.t.Helper()
	res, m := r.do(testCtx(r.t, 30*time.Second), method, params, nil)
	if m.Error != nil {
		r.t.Fatalf("%s %s: error %d %s", method, params, m.Error.Code, m.Error.Message)
	}
	var out map[string]any
	if err := json.Unmarshal(res, &out); err != nil {
		r.t.Fatalf("%s: %v: %s", method, err, res)
	}
	return out
}

// callErr sends method and returns the error's message ("" for none).
func (r *rawRPC) callErr(method, params string) string {
	r.t.Helper()
	_, m := r.do(testCtx(r.t, 30*time.Second), method, params, nil)
	if m.Error == nil {
		return ""
	}
	return fmt.Sprintf("%d %s", m.Error.Code, m.Error.Message)
}

// startTask calls tool as a task and returns the task's id.
func (r *rawRPC) startTask(tool, args string) string {
	r.t.Helper()
	p := `{"name":"` + tool + `","arguments":` + args + `,"task":{"ttl":60000}}`
	res := r.call("tools/call", p)
	var task map[string]any
	if r.v == v0728 {
		if res["resultType"] != "task" {
			r.t.Fatalf("tools/call %s: no task: %v", tool, res)
		}
		task = res
	} else {
		task, _ = res["task"].(map[string]any)
	}
	id, _ := task["taskId"].(string)
	if id == "" {
		r.t.Fatalf("tools/call %s: no task id: %v", tool, res)
	}
	return id
}

// waitStatus polls tasks/get until the task's status is want.
func (r *rawRPC) waitStatus(id, want string) map[string]any {
	r.t.Helper()
	for range 500 {
		res := r.call("tasks/get", `{"taskId":"`+id+`"}`)
		if res["status"] == want {
			return res
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.t.Fatalf("task %s never became %s", id, want)
	return nil
}

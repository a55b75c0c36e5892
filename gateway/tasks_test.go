package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/taskserver"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskBackends are the servers behind the gateway in the task tests: a
// 2026-07-28 server with the Tasks extension ("ext"), a 2025-11-25 server
// with that protocol's tasks ("core"), and a handshake-era server without
// tasks ("plain").
type taskBackends struct {
	ext, core *taskserver.Server
	plain     *testserver.State
	servers   []Server
}

func startTaskBackends(t *testing.T) *taskBackends {
	t.Helper()
	b := &taskBackends{ext: taskserver.New(taskserver.Options{PollInterval: 20}), core: taskserver.New(taskserver.Options{Core: true, PollInterval: 20})}
	t.Cleanup(b.ext.Close)
	t.Cleanup(b.core.Close)
	ext := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return b.ext.MCP }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ext.Close)
	core := httptest.NewServer(b.core.Handler())
	t.Cleanup(core.Close)
	srv, st := testserver.NewWithState(testserver.Options{Era: testserver.Legacy})
	plain := testserver.StartStreamable(t, srv)
	b.plain = st
	b.servers = []Server{{Name: "ext", Target: ext.URL}, {Name: "core", Target: core.URL}, {Name: "plain", Target: plain.URL}}
	return b
}

// taskGateway starts a gateway in front of b, behind bearer tokens: the
// token is the principal.
func taskGateway(t *testing.T, b *taskBackends, opts *Options) (*Gateway, string) {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	opts.Prefix = mcpadapter.PrefixAlways
	if opts.Logger == nil {
		opts.Logger = quietLogger(t)
	}
	g, err := New(b.servers, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	if err := g.Start(testCtx(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: token, Expiration: time.Now().Add(time.Hour)}, nil
	}
	ts := httptest.NewServer(auth.RequireBearerToken(verify, nil)(g))
	t.Cleanup(ts.Close)
	return g, ts.URL + "/mcp"
}

// coreClient is the adapter's own client of the gateway, at protocol v,
// as principal who.
func coreClient(t *testing.T, url, v, who string, elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) *mcpadapter.Client {
	t.Helper()
	c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{Name: "gw", ProtocolVersion: v, Logger: quietLogger(t),
		HTTPClient: &http.Client{Transport: bearer{who}}, ElicitationHandler: elicit,
		Tasks: &mcpadapter.TaskOptions{Mode: mcpadapter.TaskPrefer, MinPoll: 10 * time.Millisecond, MaxPoll: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestTasksCoreClient: the adapter's own client, of either protocol
// version, calls tools of every server as tasks: the handle it gets names
// the server, and the result comes back (the server's own task passed
// through, or one the gateway ran for a server without tasks).
func TestTasksCoreClient(t *testing.T) {
	b := startTaskBackends(t)
	_, url := taskGateway(t, b, nil)
	cases := []struct{ v, tool, args, want, server string }{
		{v1125, "core_work", `{"steps":2,"stepMs":10}`, "done: 2 steps", "core"},
		{v1125, "ext_work", `{"steps":2,"stepMs":10}`, "done: 2 steps", "ext"},
		{v1125, "plain_echo", `{"text":"hi"}`, "hi", "plain"},
		{v0728, "ext_work", `{"steps":2,"stepMs":10}`, "done: 2 steps", "ext"},
		{v0728, "core_work", `{"steps":2,"stepMs":10}`, "done: 2 steps", "core"},
	}
	for _, tc := range cases {
		t.Run(tc.v+"/"+tc.tool, func(t *testing.T) {
			c := coreClient(t, url, tc.v, "alice", nil)
			if _, err := c.Tools(testCtx(t, 20*time.Second)); err != nil { // learns each tool's taskSupport
				t.Fatal(err)
			}
			var h *mcpadapter.TaskHandle
			res, err := c.CallTool(testCtx(t, 30*time.Second), tc.tool, json.RawMessage(tc.args), &mcpadapter.CallOptions{OnTask: func(th mcpadapter.TaskHandle) { h = &th }})
			if err != nil || res.Text() != tc.want {
				t.Fatalf("result %q, %v", textOf(res), err)
			}
			if h == nil {
				t.Fatal("the call made no task")
			}
			if server, ok := parseTaskID(h.TaskID); !ok || server != tc.server {
				t.Fatalf("task id %q does not name server %q", h.TaskID, tc.server)
			}
		})
	}
}

func textOf(r *mcpadapter.Result) string {
	if r == nil {
		return "<nil>"
	}
	return r.Text()
}

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
	if res == nil {
		t.Fatal("initialize failed")
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
			} `json:"params"`
		}
		if json.Unmarshal([]byte(body), &m) == nil && m.Params.Name != "" {
			req.Header.Set("Mcp-Name", m.Params.Name)
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

// TestTasksRawClients: a client sending JSON-RPC itself, of each era,
// gets tasks for a server with tasks of each era and for one without;
// tasks/get reports the task, the result comes (tasks/result, or in
// tasks/get for the extension), tasks/list shows the caller's tasks only,
// and another principal sending the same id gets "unknown task".
func TestTasksRawClients(t *testing.T) {
	b := startTaskBackends(t)
	_, url := taskGateway(t, b, nil)
	for _, v := range []string{v1125, v0728} {
		for _, tc := range []struct{ tool, args, want, server string }{
			{"core_work", `{"steps":2,"stepMs":10}`, "done: 2 steps", "core"},
			{"ext_work", `{"steps":2,"stepMs":10}`, "done: 2 steps", "ext"},
			{"plain_echo", `{"text":"hi"}`, "hi", "plain"},
		} {
			t.Run(v+"/"+tc.tool, func(t *testing.T) {
				alice := newRawRPC(t, url, v, "alice", `{}`)
				bob := newRawRPC(t, url, v, "bob", `{}`)
				id := alice.startTask(tc.tool, tc.args)
				if s, ok := parseTaskID(id); !ok || s != tc.server {
					t.Fatalf("task id %q does not name %q", id, tc.server)
				}
				for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/result"} {
					if e := bob.callErr(m, `{"taskId":"`+id+`"}`); !strings.Contains(e, "unknown task") {
						t.Fatalf("bob's %s of alice's task: %q", m, e)
					}
				}
				if l := bob.call("tasks/list", `{}`); len(l["tasks"].([]any)) != 0 {
					t.Fatalf("bob lists alice's tasks: %v", l)
				}
				if l := alice.call("tasks/list", `{}`); !strings.Contains(fmt.Sprint(l), id) {
					t.Fatalf("alice's list lacks her task: %v", l)
				}
				var result map[string]any
				if v == v0728 {
					got := alice.waitStatus(id, "completed")
					result, _ = got["result"].(map[string]any)
				} else {
					alice.waitStatus(id, "completed")
					result = alice.call("tasks/result", `{"taskId":"`+id+`"}`)
				}
				if !strings.Contains(fmt.Sprint(result["content"]), tc.want) {
					t.Fatalf("result: %v", result)
				}
			})
		}
	}
}

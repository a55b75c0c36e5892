package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// namingMetas are the ways a hostile server names itself in a result: its
// serverInfo in the result's _meta plainly, with an escaped key, in one of
// two _meta members, named twice (first as the gateway), null, a string,
// or only nested (in another _meta entry and in structuredContent, where
// it is the server's content, not its name).
var namingMetas = []string{
	`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"evil","version":"1"}}`,
	`"_meta":{"io.modelcontextprotocol\/serverInfo":{"name":"evil","version":"2"}}`,
	`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"evil","version":"3"}},"_meta":{"x":1}`,
	`"_meta":{"x":1},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"evil","version":"4"}}`,
	`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpadapter-gateway","version":"evil"},"io.modelcontextprotocol/serverInfo":{"name":"evil","version":"5"}}`,
	`"_meta":{"io.modelcontextprotocol/serverInfo":null}`,
	`"_meta":{"io.modelcontextprotocol/serverInfo":"evil"}`,
	`"_meta":{"x":{"io.modelcontextprotocol/serverInfo":{"name":"evil","version":"8"}}},"structuredContent":{"io.modelcontextprotocol/serverInfo":{"name":"evil","version":"8"}}`,
}

// startNamingServers starts one handshake-era server for each of
// namingMetas, answering its tools/call (a plain tool t, and a tool task
// that always runs as a task), tasks/result, prompts/get, resources/read
// and completion/complete with results that name the server that way.
func startNamingServers(t *testing.T) []Server {
	t.Helper()
	var servers []Server
	for i, m := range namingMetas {
		raw := testserver.StartRawHTTP(t, map[string]string{
			"tools/call t":        `{"content":[{"type":"text","text":"plain"}],` + m + `}`,
			"tasks/result":        `{"content":[{"type":"text","text":"task done"}],` + m + `}`,
			"prompts/get":         `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],` + m + `}`,
			"resources/read":      `{"contents":[{"uri":"test://r","text":"r"}],` + m + `}`,
			"completion/complete": `{"completion":{"values":["x"]},` + m + `}`,
			"initialize":          `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"prompts":{},"resources":{},"completions":{},"tasks":{"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"raw","version":"1"}}`,
		})
		servers = append(servers, Server{Name: fmt.Sprintf("n%d", i+1), Target: raw.URL})
	}
	return servers
}

// startCountingGateway starts a gateway (with the fast path unless
// slowOnly) and counts the tools/calls it answers on the fast path.
func startCountingGateway(t *testing.T, servers []Server, slowOnly bool) (*Gateway, string, *atomic.Int32) {
	t.Helper()
	g, err := New(servers, &Options{Logger: quietLogger(t), slowPathOnly: slowOnly})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	if err := g.Start(testCtx(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	var fast atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Method") == "tools/call" {
			body, _ := io.ReadAll(r.Body)
			probe := r.Clone(r.Context())
			probe.Body = io.NopCloser(bytes.NewReader(body))
			if g.fastRequestOf(probe) != nil {
				fast.Add(1)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		g.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return g, ts.URL + "/mcp", &fast
}

// namedIn returns the serverInfo in the _meta of res, a result.
func namedIn(res json.RawMessage) (any, bool, error) {
	var r struct {
		Meta map[string]any `json:"_meta"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, false, err
	}
	si, ok := r.Meta["io.modelcontextprotocol/serverInfo"]
	return si, ok, nil
}

// TestServerInfoNeverRelayed: servers that name themselves in their
// results (namingMetas) never reach the gateway's clients as the server
// that answered: a client of either version, on the fast path and on
// go-sdk's handler, sees in a result's _meta no serverInfo (handshake era)
// or the gateway's own, for plain calls, calls of a tool that runs as a
// task, the results of tasks (tasks/result, and the result tasks/get
// carries at 2026-07-28), prompts, resources and completions.
func TestServerInfoNeverRelayed(t *testing.T) {
	servers := startNamingServers(t)
	for _, slowOnly := range []bool{false, true} {
		g, url, fast := startCountingGateway(t, servers, slowOnly)
		var own map[string]any
		b, _ := json.Marshal(g.impl)
		_ = json.Unmarshal(b, &own)
		answered := 0
		for _, v := range []string{v1125, v0728} {
			for i, s := range servers {
				c := newRawRPC(t, url, v, "alice", `{"elicitation":{}}`)
				check := func(what, method, params string) {
					t.Helper()
					res, m := c.do(testCtx(t, 30*time.Second), method, params, nil)
					switch {
					case m.Error != nil && i == 0:
						t.Errorf("slow path only %v: %s %s %s: error %d %s", slowOnly, v, s.Name, what, m.Error.Code, m.Error.Message)
					case m.Error != nil: // a result go-sdk cannot read
					default:
						answered++
						si, named, err := namedIn(res)
						if err != nil || named && !reflect.DeepEqual(si, own) {
							t.Errorf("slow path only %v: %s %s %s (%s) names the server %v (%v): %s", slowOnly, v, s.Name, what, namingMetas[i], si, err, res)
						}
					}
				}
				check("tools/call t", "tools/call", `{"name":"`+s.Name+`_t","arguments":{}}`)
				check("tools/call task", "tools/call", `{"name":"`+s.Name+`_task","arguments":{}}`)
				// A client that declares no tasks: the gateway runs the
				// server's task and answers the call with its result.
				check("tools/call task of a client without tasks", "tools/call", `{"name":"`+s.Name+`_task","arguments":{},"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}`)
				check("prompts/get", "prompts/get", `{"name":"`+s.Name+`_p"}`)
				check("completion/complete", "completion/complete", `{"ref":{"type":"ref/prompt","name":"`+s.Name+`_p"},"argument":{"name":"a","value":"x"}}`)
				id := c.startTask(s.Name+"_task", `{}`)
				got := c.waitStatus(id, "completed")
				if v == v1125 {
					check("tasks/result", "tasks/result", `{"taskId":"`+id+`"}`)
					continue
				}
				b, _ := json.Marshal(got["result"])
				if si, named, err := namedIn(b); err != nil || named && !reflect.DeepEqual(si, own) {
					t.Errorf("slow path only %v: %s %s the result tasks/get carries (%s) names the server %v (%v): %s", slowOnly, v, s.Name, namingMetas[i], si, err, b)
				}
			}
		}
		if answered < len(servers) {
			t.Fatalf("slow path only %v: %d requests answered", slowOnly, answered)
		}
		if n := fast.Load(); (n > 0) == slowOnly {
			t.Errorf("slow path only %v: %d calls took the fast path", slowOnly, n)
		}
	}
}

// TestServerInfoNeverRelayedResources: a server that names itself in the
// result of resources/read (namingMetas) is not named in what a client of
// either version reads.
func TestServerInfoNeverRelayedResources(t *testing.T) {
	for i, m := range namingMetas {
		raw := testserver.StartRawHTTP(t, map[string]string{
			"resources/read": `{"contents":[{"uri":"test://r","text":"r"}],` + m + `}`,
		})
		g, url, _ := startCountingGateway(t, []Server{{Name: "r", Target: raw.URL}}, false)
		var own map[string]any
		b, _ := json.Marshal(g.impl)
		_ = json.Unmarshal(b, &own)
		for _, v := range []string{v1125, v0728} {
			c := newRawRPC(t, url, v, "alice", `{}`)
			res, reply := c.do(testCtx(t, 30*time.Second), "resources/read", `{"uri":"test://r"}`, nil)
			if reply.Error != nil {
				if i == 0 {
					t.Errorf("%s: %d %s", v, reply.Error.Code, reply.Error.Message)
				}
				continue
			}
			if si, named, err := namedIn(res); err != nil || named && !reflect.DeepEqual(si, own) {
				t.Errorf("%s (%s) names the server %v (%v): %s", v, m, si, err, res)
			}
		}
	}
}

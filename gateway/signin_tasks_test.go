package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// signInTaskEnv is a gateway with sign-in pages in front of "up", a
// server (whoami) behind its own authorization server, whose clients'
// bearer token is their principal and whose browsers' user is the
// testauth user header (SignInOptions.Authenticate).
type signInTaskEnv struct {
	url  string
	upAS *testauth.Server
}

func startSignInTasks(t *testing.T) *signInTaskEnv {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	who := mcp.NewServer(&mcp.Implementation{Name: "whoami", Version: "1"}, nil)
	who.AddTool(&mcp.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.GetExtra().Header.Get("Authorization")}}}, nil
		})
	upAS := testauth.Start(t, testauth.Options{MCP: who, ClientID: "gw", ClientSecret: "gw-s3cret", NoRegistration: true})
	g, err := New([]Server{{Name: "up", Target: upAS.MCPURL,
		SignIn: &SignIn{Issuer: upAS.URL, ClientID: "gw", ClientSecret: "gw-s3cret", Scopes: []string{testauth.BaseScope}}}},
		&Options{Logger: quietLogger(t), Prefix: mcpadapter.PrefixAlways, SignIn: &SignInOptions{URL: base, Key: []byte("0123456789abcdef0123456789abcdef"),
			Authenticate: func(r *http.Request) (string, error) { return r.Header.Get(testauth.UserHeader), nil }}})
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
	mux := http.NewServeMux()
	mux.Handle("/oauth/", g.SignInHandler())
	mux.Handle("/", auth.RequireBearerToken(verify, nil)(g))
	hs := httptest.NewUnstartedServer(mux)
	hs.Listener.Close()
	hs.Listener = ln
	hs.Start()
	t.Cleanup(hs.Close)
	return &signInTaskEnv{url: base + "/mcp", upAS: upAS}
}

// signIn makes user's browser follow link to the end of the sign-in.
func (e *signInTaskEnv) signIn(t *testing.T, user, link string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Transport: headerTransport{testauth.UserHeader, user}, Timeout: 20 * time.Second}
	resp, err := hc.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Signed in to up") {
		t.Fatalf("%s's sign-in ended with %d %q", user, resp.StatusCode, body)
	}
}

type headerTransport struct{ k, v string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.k, h.v)
	return http.DefaultTransport.RoundTrip(r)
}

// calls returns how many tool calls reached the server with user's
// token.
func (e *signInTaskEnv) calls(user string) int {
	n := 0
	for _, r := range e.upAS.Requests() {
		if r.User == user && r.Header.Get("Mcp-Method") == "tools/call" {
			n++
		}
	}
	return n
}

// urlCaps0728 are the _meta of a 2026-07-28 request whose client declares
// the Tasks extension and URL elicitation.
const urlCaps0728 = `"_meta":{"` + mcp.MetaKeyClientCapabilities + `":{"elicitation":{"url":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// TestSignInTask: a task call of a sign-in server whose principal has no
// token goes input_required with the URL question, in the task's era
// form: a 2025-11-25 client is asked on its tasks/result (an
// elicitation/create in URL mode), a 2026-07-28 client finds the
// question in tasks/get's inputRequests and answers with tasks/update.
// Once the user signed in, the task runs, once, with the user's token. A
// declined question ends the task with an error result, a task
// cancelled while it asks ends without a call; a client that takes no
// URL question gets the task failed with CodeSignInRequired.
func TestSignInTask(t *testing.T) {
	e := startSignInTasks(t)
	t.Run(v1125, func(t *testing.T) {
		c := newRawRPC(t, e.url, v1125, "alice", `{"elicitation":{"url":{}}}`)
		id := c.startTask("up_whoami", `{}`)
		c.waitStatus(id, "input_required")
		var asked string
		res, m := c.do(testCtx(t, 30*time.Second), "tasks/result", `{"taskId":"`+id+`"}`, func(method string, params json.RawMessage) string {
			var q mcp.ElicitParams
			if method != "elicitation/create" || json.Unmarshal(params, &q) != nil || q.Mode != "url" || q.ElicitationID == "" {
				return `{"action":"cancel"}`
			}
			asked = q.URL
			e.signIn(t, "alice", q.URL)
			return `{"action":"accept"}`
		})
		if m.Error != nil || asked == "" || !strings.Contains(string(res), "Bearer ") {
			t.Fatalf("tasks/result: %s %+v (asked %q)", res, m.Error, asked)
		}
		if n := e.calls("alice"); n != 1 {
			t.Fatalf("alice's task reached the server %d times, want 1", n)
		}
	})
	t.Run(v0728, func(t *testing.T) {
		c := newRawRPC(t, e.url, v0728, "bob", `{}`)
		res := c.call("tools/call", `{"name":"up_whoami","arguments":{},"task":{"ttl":60000},`+urlCaps0728+`}`)
		id, _ := res["taskId"].(string)
		if id == "" {
			t.Fatalf("no task: %v", res)
		}
		got := c.waitStatus(id, "input_required")
		reqs, _ := got["inputRequests"].(map[string]any)
		if len(reqs) != 1 {
			t.Fatalf("input requests: %v", got)
		}
		answers := map[string]any{}
		for k, r := range reqs {
			b, _ := json.Marshal(r)
			var q struct {
				Method string           `json:"method"`
				Params mcp.ElicitParams `json:"params"`
			}
			if json.Unmarshal(b, &q) != nil || q.Method != "elicitation/create" || q.Params.Mode != "url" {
				t.Fatalf("question %s", b)
			}
			e.signIn(t, "bob", q.Params.URL)
			answers[k] = map[string]any{"action": "accept"}
		}
		ab, _ := json.Marshal(map[string]any{"taskId": id, "inputResponses": answers})
		if msg := newRawRPC(t, e.url, v0728, "mallory", `{}`).callErr("tasks/update", string(ab)); !strings.Contains(msg, "unknown task") {
			t.Fatalf("mallory answering bob's task: %q", msg)
		}
		c.call("tasks/update", string(ab))
		done := c.waitStatus(id, "completed")
		if !strings.Contains(fmt.Sprint(done["result"]), "Bearer ") || e.calls("bob") != 1 || e.calls("mallory") != 0 {
			t.Fatalf("bob's task: %v, %d calls", done, e.calls("bob"))
		}
	})
	t.Run("decline", func(t *testing.T) {
		c := newRawRPC(t, e.url, v1125, "carol", `{"elicitation":{"url":{}}}`)
		id := c.startTask("up_whoami", `{}`)
		c.waitStatus(id, "input_required")
		res, m := c.do(testCtx(t, 30*time.Second), "tasks/result", `{"taskId":"`+id+`"}`, func(string, json.RawMessage) string {
			return `{"action":"decline"}`
		})
		if m.Error != nil || !strings.Contains(string(res), "did not sign in to up (decline)") || e.calls("carol") != 0 {
			t.Fatalf("carol declined: %s %+v", res, m.Error)
		}
	})
	t.Run("cancelled while asking", func(t *testing.T) {
		c := newRawRPC(t, e.url, v1125, "erin", `{"elicitation":{"url":{}}}`)
		id := c.startTask("up_whoami", `{}`)
		c.waitStatus(id, "input_required")
		c.call("tasks/cancel", `{"taskId":"`+id+`"}`)
		c.waitStatus(id, "cancelled")
		if e.calls("erin") != 0 {
			t.Fatal("erin's cancelled task reached the server")
		}
	})
	t.Run("no url elicitation", func(t *testing.T) {
		c := newRawRPC(t, e.url, v1125, "dave", `{}`)
		id := c.startTask("up_whoami", `{}`)
		c.waitStatus(id, "failed")
		msg := c.callErr("tasks/result", `{"taskId":"`+id+`"}`)
		if !strings.HasPrefix(msg, fmt.Sprint(CodeSignInRequired)+" ") {
			t.Fatalf("dave's task: %q", msg)
		}
	})
}

package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// auditedGateway starts a gateway over servers with an audit log (payloads
// of every call) behind a bearer check whose token is the principal, and
// returns the log and a function that connects a principal's client.
func auditedGateway(t *testing.T, servers []Server, opts *Options) (*lockedBuffer, func(principal, version string) *mcp.ClientSession) {
	t.Helper()
	var buf lockedBuffer
	opts.Logger = quietLogger(t)
	opts.AuditLog = slog.New(slog.NewJSONHandler(&buf, nil))
	opts.AuditPayload = func(string, string, string) bool { return true }
	_, url := startForPrincipals(t, servers, opts)
	return &buf, func(principal, version string) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: principal}, nil)
		cs, err := c.Connect(testCtx(t, 20*time.Second), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{principal}}}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
}

// TestAuditSecretsInEveryEncoding: a server that says back the secret
// headers its config entry sends it, and a result that tries to forge
// audit records. The config's secrets are blanked out of the audit log
// however they are encoded there: a secret with characters JSON escapes
// (& < > "), and one that the 64 KiB cut of a payload would split. The
// forged record stays inside its call's record.
func TestAuditSecretsInEveryEncoding(t *testing.T) {
	const (
		special = `aud&it<key>"value-7731`
		plain   = "plain-secret-header-value-4411"
		forged  = "\"}\n{\"level\":\"INFO\",\"msg\":\"tool call\",\"principal\":\"bob\",\"tool\":\"forged\"}\n"
	)
	srv := mcp.NewServer(&mcp.Implementation{Name: "tattle", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "say", Description: "Say the request's secret headers.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			h := req.Extra.Header
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "key " + h.Get("X-Key") + " and " + h.Get("X-Plain") + forged}}}, nil
		})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(up.Close)
	cfg, err := mcpadapter.ParseConfig([]byte(fmt.Sprintf(`{"mcpServers": {"s": {"url": %q, "headers": {"X-Key": %q, "X-Plain": %q}}}}`, up.URL, special, plain)))
	if err != nil {
		t.Fatal(err)
	}
	buf, client := auditedGateway(t, FromConfig(cfg), &Options{})
	cs := client("alice", v1125)
	ctx := testCtx(t, 30*time.Second)
	// Arguments (as the client sends them) whose plain secret starts ten
	// bytes before the cut, and which hold the special one JSON-escaped.
	head := `{"k":` + mustJSON(special) + `,"pad":"`
	pad := strings.Repeat("x", maxAuditPayload-10-len(head)-len(`","p":"`))
	args := json.RawMessage(head + pad + `","p":"` + plain + `"}`)
	if i := strings.Index(string(args), plain); i != maxAuditPayload-10 {
		t.Fatalf("the plain secret starts at %d", i)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "say", Arguments: args})
	if err != nil || !strings.Contains(texts(res), special) {
		t.Fatalf("the server did not say its header: %v %q", err, texts(res))
	}
	recs := buf.records(t)
	if len(recs) != 1 || recs[0]["principal"] != "alice" || recs[0]["tool"] != "say" {
		t.Fatalf("records: %d, want one of alice's call of say (a result forged more):\n%s", len(recs), buf.String())
	}
	// What a reader of the log sees: the line, and the payloads decoded.
	seen := []string{buf.String()}
	for _, key := range []string{"arguments", "result"} {
		s, _ := recs[0][key].(string)
		seen = append(seen, s)
		var v any
		if json.Unmarshal([]byte(s), &v) == nil {
			seen = append(seen, fmt.Sprint(v))
		}
	}
	for _, s := range seen {
		for _, secret := range []string{special, plain[:10]} {
			if strings.Contains(s, secret) {
				t.Errorf("the audit log shows %q of a secret:\n%.300s", secret, s)
			}
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestAuditThroughSearchPair: with the search pair shown, every tool call
// is recorded as for a catalog tool: a call_tool of a tool the principal
// may not use, or of one that does not exist, is recorded refused, naming
// the tool asked for; search_tools is recorded too; and each principal's
// records name that principal, however their calls interleave.
func TestAuditThroughSearchPair(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "s"}), testserver.Stateless())
	buf, client := auditedGateway(t, []Server{{Name: "s", Target: up.URL}}, &Options{Policy: denyFail{}, ToolSearch: &mcpadapter.ToolSearch{Threshold: -1}})
	alice, bob := client("alice", v1125), client("bob", v0728)
	ctx := testCtx(t, 30*time.Second)
	calls := []struct {
		tool, asked, outcome string
		args                 map[string]any
	}{
		{mcpadapter.SearchToolsName, mcpadapter.SearchToolsName, "ok", map[string]any{"query": "echo text"}},
		{mcpadapter.CallToolName, "echo", "ok", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}},
		{mcpadapter.CallToolName, "fail", "refused", map[string]any{"name": "fail", "arguments": map[string]any{"message": "m"}}},
		{mcpadapter.CallToolName, "nope", "refused", map[string]any{"name": "nope", "arguments": map[string]any{}}},
	}
	for _, c := range calls {
		if _, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args}); err != nil {
			t.Fatalf("%s %v: %v", c.tool, c.args, err)
		}
		if _, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: mcpadapter.CallToolName, Arguments: map[string]any{"name": "echo", "arguments": map[string]any{"text": "bob"}}}); err != nil {
			t.Fatal(err)
		}
	}
	var mine []map[string]any
	for _, r := range buf.records(t) {
		switch r["principal"] {
		case "alice":
			mine = append(mine, r)
		case "bob":
			if r["tool"] != "echo" || !strings.Contains(fmt.Sprint(r["arguments"]), "bob") {
				t.Errorf("a record of bob's names another call: %v", r)
			}
		default:
			t.Errorf("a record names no caller of the test: %v", r)
		}
	}
	if len(mine) != len(calls) {
		t.Fatalf("%d records of alice's %d calls:\n%s", len(mine), len(calls), buf.String())
	}
	for i, c := range calls {
		if r := mine[i]; r["tool"] != c.asked || r["outcome"] != c.outcome {
			t.Errorf("record %d: %v, want tool %s, outcome %s", i, r, c.asked, c.outcome)
		}
	}
}

// TestReadyzWithNoServerUp: a gateway whose servers are all down is alive
// but not ready; a rebinding page's Host (a loopback name as a prefix of
// its own) is refused on both probes.
func TestReadyzWithNoServerUp(t *testing.T) {
	g, _ := startGateway(t, []Server{{Name: "gone", Target: mcpadapter.Command{Path: "/nonexistent/server"}}}, nil)
	ts := httptest.NewServer(g.HealthHandler())
	t.Cleanup(ts.Close)
	for path, want := range map[string]int{"/healthz": http.StatusOK, "/readyz": http.StatusServiceUnavailable} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s with no server up: %d, want %d", path, resp.StatusCode, want)
		}
		req, _ := http.NewRequest(http.MethodGet, ts.URL+path, nil)
		req.Host = "localhost.evil.example"
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s for Host %s: %d", path, req.Host, resp.StatusCode)
		}
	}
}

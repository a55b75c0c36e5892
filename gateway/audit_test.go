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
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// records returns the JSON lines written so far.
func (l *lockedBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("an audit line is not JSON: %q", line)
		}
		out = append(out, m)
	}
	return out
}

// denyFail is a Policy that keeps alice from the fail tool.
type denyFail struct{}

func (denyFail) Allow(_ context.Context, principal, _, _, name string) bool {
	return !(principal == "alice" && name == "fail")
}

// TestAuditLog: each tool call through the gateway is one JSON line naming
// who called which tool on which server, the outcome and the duration;
// arguments and results only for the calls AuditPayload names; the
// config's secrets never.
func TestAuditLog(t *testing.T) {
	const secret = "audit-secret-header-7731"
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "s"}), testserver.Stateless())
	cfg, err := mcpadapter.ParseConfig([]byte(fmt.Sprintf(`{"mcpServers": {"s": {"url": %q, "headers": {"X-Key": %q}}}}`, up.URL, secret)))
	if err != nil {
		t.Fatal(err)
	}
	var buf lockedBuffer
	g, err := New(FromConfig(cfg), &Options{
		Logger:       quietLogger(t),
		Policy:       denyFail{},
		AuditLog:     slog.New(slog.NewJSONHandler(&buf, nil)),
		AuditPayload: func(_, _, tool string) bool { return tool == "headers" },
	})
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
	c := mcp.NewClient(&mcp.Implementation{Name: "alice"}, nil)
	cs, err := c.Connect(testCtx(t, 20*time.Second), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{"alice"}}}, &mcp.ClientSessionOptions{ProtocolVersion: v1125})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	ctx := testCtx(t, 30*time.Second)
	calls := []struct {
		tool, outcome string
		args          map[string]any
	}{
		{"echo", "ok", map[string]any{"text": "hi"}},
		{"fail_structured", "tool_error", map[string]any{}},
		{"fail", "refused", map[string]any{"message": "m"}}, // the policy keeps alice from it
		{"nope", "refused", map[string]any{}},
		{"headers", "ok", map[string]any{}},
	}
	for _, c := range calls {
		_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
	}
	recs := buf.records(t)
	if len(recs) != len(calls) {
		t.Fatalf("%d audit records for %d calls:\n%s", len(recs), len(calls), buf.String())
	}
	for i, c := range calls {
		r := recs[i]
		if r["tool"] != c.tool || r["outcome"] != c.outcome || r["principal"] != "alice" || r["msg"] != "tool call" {
			t.Errorf("record %d: %v, want tool %s, outcome %s, principal alice", i, r, c.tool, c.outcome)
		}
		if _, ok := r["duration_ms"].(float64); !ok {
			t.Errorf("record %d has no duration: %v", i, r)
		}
		if c.outcome == "ok" && r["server"] != "s" {
			t.Errorf("record %d names server %v", i, r["server"])
		}
		_, hasArgs := r["arguments"]
		if want := c.tool == "headers"; hasArgs != want {
			t.Errorf("record %d (%s) holds arguments: %v, want %v", i, c.tool, hasArgs, want)
		}
	}
	if res, _ := recs[4]["result"].(string); !strings.Contains(res, "[REDACTED]") {
		t.Errorf("the headers tool's result in the audit record: %q (want the X-Key value blanked out)", res)
	}
	if strings.Contains(buf.String(), secret) {
		t.Errorf("the audit log holds a secret of the config:\n%s", buf.String())
	}
}

// TestHealthHandler: liveness until shutdown; readiness only with a
// server up, naming the servers without their errors; Host checked.
func TestHealthHandler(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "s"}), testserver.Stateless())
	g, _ := startGateway(t, []Server{{Name: "s", Target: up.URL}, {Name: "gone", Target: mcpadapter.Command{Path: "/nonexistent/server"}}}, nil)
	ts := httptest.NewServer(g.HealthHandler())
	t.Cleanup(ts.Close)
	get := func(path string) (int, map[string]any) {
		t.Helper()
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	if code, m := get("/healthz"); code != 200 || m["alive"] != true {
		t.Errorf("/healthz: %d %v", code, m)
	}
	code, m := get("/readyz")
	if code != 200 || m["ready"] != true || !strings.Contains(fmt.Sprint(m["servers"]), "gone") {
		t.Errorf("/readyz: %d %v", code, m)
	}
	if strings.Contains(fmt.Sprint(m), "nonexistent") {
		t.Errorf("/readyz shows why a server is down: %v", m)
	}
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/readyz", nil)
	req.Host = "evil.example"
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("a foreign Host: %v %v", resp, err)
	}
	if err := g.Shutdown(testCtx(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if code, _ := get("/healthz"); code != http.StatusServiceUnavailable {
		t.Errorf("/healthz after shutdown: %d", code)
	}
	if code, _ := get("/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz after shutdown: %d", code)
	}
}

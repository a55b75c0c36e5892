package gateway

import (
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStderrSecretsSplitNeverShown: a stdio server the config gives no
// secret prints secrets of its own split across stderr lines (a folded
// header, a YAML block, a PEM key), in a Python dict and as curl's -u,
// and two lines on stdout that are not JSON-RPC, then exits. None is in
// an event, a status, the gateway's JSON log or a client's error.
func TestStderrSecretsSplitNeverShown(t *testing.T) {
	script := `echo "Authorization: Bearer" >&2; echo "    S3CR-01" >&2; echo "X-Api-Key:" >&2; echo "  S3CR-02" >&2
echo "token: |" >&2; echo "  S3CR-03" >&2; echo "-----BEGIN PRIVATE KEY-----" >&2; echo "MIIS3CR04" >&2
echo "-----END PRIVATE KEY-----" >&2; echo "{'password': 'S3CR-05'}" >&2; echo "curl -u ann:S3CR-06 https://h" >&2
echo "GITHUB_TOKEN=S3CR-07"; echo "Authorization: Bearer S3CR-08"; exit 3`
	cfg, err := mcpadapter.ParseConfig([]byte(`{"mcpServers": {"leaky": {"command": "/bin/sh", "args": ` + mustJSON([]string{"-c", script}) + `}}}`))
	if err != nil {
		t.Fatal(err)
	}
	all := shownOfLeakyCall(t, cfg, func(w io.Writer) slog.Handler {
		return slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})
	})
	if !strings.Contains(all, "-----END PRIVATE KEY-----") {
		t.Errorf("the server's stderr is shown nowhere:\n%s", all)
	}
	for _, line := range strings.Split(all, "\n") {
		if i := strings.Index(line, "S3CR"); i >= 0 {
			t.Errorf("a secret is shown: …%s…", line[max(0, i-600):min(len(line), i+20)])
		}
	}
}

// TestAuditPayloadMemberNames: the audit log's payloads hide a secret in
// a member's name (a header line or a URL as a map's key) and the text
// forms of a secret in arguments and in the echoed result.
func TestAuditPayloadMemberNames(t *testing.T) {
	servers := []Server{{Name: "s", Target: testserver.New(testserver.Options{})}}
	buf, client := auditedGateway(t, servers, &Options{})
	cs := client("alice", v1125)
	ctx := testCtx(t, 30*time.Second)
	text := "config {'password': 'S3CR-11', 'user': 'ann'}\ncurl -u ann:S3CR-12 -H \"X-Api-Key: S3CR-13\" keep-me\nX-Api-Key:\n  S3CR-14"
	args := json.RawMessage(`{"text":` + mustJSON(text) + `}`)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
	if err != nil || !strings.Contains(texts(res), "S3CR-11") {
		t.Fatalf("echo: %v %q", err, texts(res))
	}
	// Refused by the tool's schema, and recorded all the same.
	keys := json.RawMessage(`{"text":"x","headers":{"Authorization: Bearer S3CR-15":true,"https://ann:S3CR-16@h/x":1}}`)
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: keys}); err != nil {
		t.Fatal(err)
	}
	recs := buf.records(t)
	if len(recs) != 2 {
		t.Fatalf("records: %d, want 2:\n%s", len(recs), buf.String())
	}
	for i, r := range recs {
		for _, key := range []string{"arguments", "result"} {
			if s, _ := r[key].(string); strings.Contains(s, "S3CR") {
				t.Errorf("record %d: the audit log's %s shows a secret: %s", i, key, s)
			}
		}
	}
	for _, want := range []string{"keep-me", "'user': 'ann'"} {
		if s, _ := recs[0]["result"].(string); !strings.Contains(s, want) {
			t.Errorf("the result lacks %q: %s", want, s)
		}
	}
	if s, _ := recs[1]["arguments"].(string); !strings.Contains(s, "Authorization: Bearer [REDACTED]") {
		t.Errorf("arguments: %s", s)
	}
}

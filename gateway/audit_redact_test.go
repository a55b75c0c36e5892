package gateway

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAuditPayloadRedacted: a client's call whose arguments hold
// credentials the config does not know (a password member, a bearer
// token and a cookie header in a text), echoed back by the server, is
// recorded with the payloads of the audit log redacted as the protocol
// trace is; the rest of the payload is kept.
func TestAuditPayloadRedacted(t *testing.T) {
	servers := []Server{{Name: "s", Target: testserver.New(testserver.Options{})}}
	buf, client := auditedGateway(t, servers, &Options{})
	cs := client("alice", v1125)
	ctx := testCtx(t, 30*time.Second)
	text := "Bearer S3CR-01 then\nCookie: sid=S3CR-02\nand https://ann:S3CR-03@h/x keep-me"
	args := json.RawMessage(`{"text":` + mustJSON(text) + `}`)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
	if err != nil || !strings.Contains(texts(res), "S3CR-01") {
		t.Fatalf("echo: %v %q", err, texts(res))
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"x","password":"S3CR-04"}`)}); err != nil {
		t.Fatal(err)
	}
	recs := buf.records(t)
	if len(recs) != 2 {
		t.Fatalf("records: %d, want 2:\n%s", len(recs), buf.String())
	}
	for _, r := range recs {
		for _, key := range []string{"arguments", "result"} {
			if s, _ := r[key].(string); strings.Contains(s, "S3CR") {
				t.Errorf("the audit log's %s shows a secret: %s", key, s)
			}
		}
	}
	if s, _ := recs[0]["arguments"].(string); !strings.Contains(s, "keep-me") || !strings.Contains(s, "[REDACTED]") {
		t.Errorf("arguments: %s", s)
	}
}

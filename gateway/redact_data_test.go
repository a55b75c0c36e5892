package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSecretsNotInErrorData: a server's JSON-RPC error whose data quotes
// the credential of the config (the Authorization header it was sent)
// reaches the client with the credential blanked out of the data as of
// the message, the data still JSON, the rest of it kept.
func TestSecretsNotInErrorData(t *testing.T) {
	cfg, err := mcpadapter.ParseConfig([]byte(fmt.Sprintf(`{"mcpServers":{"quoting":{"url":%q,"headers":{"Authorization":"Bearer SECRET-QUOTED-TOKEN"}}}}`, echoAuthServer(t))))
	if err != nil {
		t.Fatal(err)
	}
	_, url := startGateway(t, FromConfig(cfg), nil)
	for _, v := range []string{v1125, v0728} {
		cs := connect(t, url, v, nil)
		_, err := cs.CallTool(testCtx(t, 30*time.Second), &mcp.CallToolParams{Name: "auth"})
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != -32001 {
			t.Fatalf("%s: %v; want the server's error -32001", v, err)
		}
		if strings.Contains(we.Message, "SECRET") || strings.Contains(string(we.Data), "SECRET") {
			t.Errorf("%s: the client got the credential: %q, data %s", v, we.Message, we.Data)
		}
		var data map[string]any
		if err := json.Unmarshal(we.Data, &data); err != nil || data["sent"] != "[REDACTED]" || fmt.Sprint(data["parts"]) != "[Bearer [REDACTED]]" {
			t.Errorf("%s: data %s (%v); want the server's, the credential blanked out", v, we.Data, err)
		}
	}
}

// TestRedactErrorData: the data of a JSON-RPC error keeps what holds no
// secret as it is, has a secret in a string blanked out, and is dropped
// when blanking a secret would leave it invalid JSON (a number).
func TestRedactErrorData(t *testing.T) {
	red := newRedactor([]Server{{Config: &mcpadapter.ServerConfig{Name: "s", Command: "x", Env: map[string]string{"PIN": "123456789", "KEY": "sk-abcdef"}}}})
	for _, tt := range []struct{ data, want string }{
		{`{"ok":true}`, `{"ok":true}`},
		{`{"key":"the sk-abcdef key"}`, `{"key":"the [REDACTED] key"}`},
		{`{"pin":123456789}`, ``},
		{``, ``},
	} {
		err := red.rpcErr(&jsonrpc.Error{Code: -32000, Message: "m", Data: json.RawMessage(tt.data)})
		var we *jsonrpc.Error
		if !errors.As(err, &we) {
			t.Fatalf("data %s: got %v; want a JSON-RPC error", tt.data, err)
		}
		if string(we.Data) != tt.want {
			t.Errorf("data %s: got data %s; want %s", tt.data, we.Data, tt.want)
		}
	}
}

package gateway

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestHostileMetaRelayed: a handshake-era client of the gateway sends
// tools/calls whose _meta is not an object, deeply nested, huge, or
// names go-sdk's own per-request entries and a progress token of its
// own. Each is answered (a result or an error, no hang), the gateway
// still serves the next call, and what the server sees as the client's
// info and protocol version is the gateway client's, never the crafted
// one, for servers of both eras.
func TestHostileMetaRelayed(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 990) + `1` + strings.Repeat(`}`, 990) // within go-sdk's 1000 levels
	metas := []string{
		`null`, `"x"`, `[1,2]`, `7`,
		`{"deep":` + deep + `}`,
		`{"big":"` + strings.Repeat("x", 1<<20) + `"}`,
		`{"io.modelcontextprotocol/clientInfo":{"name":"EVIL","version":"1"},"io.modelcontextprotocol/protocolVersion":"1999-01-01","progressToken":{"EVIL":1}}`,
		`{"progressToken":"EVIL-token","io.modelcontextprotocol/clientCapabilities":"EVIL"}`,
	}
	for _, era := range []testserver.Era{testserver.Legacy, testserver.Modern} {
		t.Run(era.String(), func(t *testing.T) {
			_, url := startGateway(t, []Server{{Name: "s", Target: testserver.New(testserver.Options{Era: era})}}, nil)
			s := rawInit(t, url, `{}`)
			call := func(meta string) string {
				t.Helper()
				resp := s.post(testCtx(t, 20*time.Second), `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"whoami","arguments":{},"_meta":`+meta+`}}`)
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatalf("_meta %.60s: %v", meta, err)
				}
				return string(b)
			}
			for _, m := range metas {
				got := call(m)
				if !strings.Contains(got, `"result"`) && !strings.Contains(got, `"error"`) {
					t.Errorf("_meta %.60s: no answer: %.200s", m, got)
				}
				if strings.Contains(got, "EVIL") {
					t.Errorf("_meta %.60s: the server saw the crafted entries: %.300s", m, got)
				}
			}
			if got := call(`{"example.com/trace":"t-1"}`); !strings.Contains(got, `t-1`) {
				t.Errorf("the call after: %.300s", got)
			}
		})
	}
}

package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkFastRequest measures the gateway's reading of a 2026-07-28
// client's plain tools/call on the fast path (fastRequestOf: the envelope,
// the params, the lean session's _meta, a direct call's params) and the
// client's capabilities it sends on to the server (forwardMeta's
// capsForward), for the request a go-sdk client writes.
func BenchmarkFastRequest(b *testing.B) {
	body := []byte(leanCall("17", `"up_echo"`, `{"text":"hello"}`,
		`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"v1.0.0"},"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}}}`))
	g := &Gateway{cat: newCatalog(nil)}
	g.cat.registered.Store(&map[string]bool{"up_echo": true})
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	for k, v := range fastHeaders("up_echo") {
		r.Header.Set(k, v)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	b.ReportAllocs()
	for b.Loop() {
		r.Body = io.NopCloser(bytes.NewReader(body))
		f := g.fastRequestOf(r)
		if f == nil || f.call == nil {
			b.Fatal("not a direct call")
		}
		one := &oneRequest{version: f.init.ProtocolVersion, meta: f.taken, caps: f.init.Capabilities}
		c := g.encodedCaps(one.capsJSON(f.init.Capabilities), f.init.Capabilities)
		// As the client's fast path encodes the _meta holding them.
		out.Reset()
		if err := enc.Encode(map[string]any{mcp.MetaKeyClientCapabilities: c}); err != nil {
			b.Fatal(err)
		}
	}
}

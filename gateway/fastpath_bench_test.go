package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// BenchmarkFastSession measures the session of the gateway's server the
// fast path makes for a direct call and closes once it is answered
// (answerFast): made over the call's one-request connection, and closed,
// at once ("now") or after a call's answer came from another goroutine
// ("call"). cpu-µs/op is the process's CPU time per session.
func BenchmarkFastSession(b *testing.B) {
	// The server is never started: the session is all that runs.
	g, err := New([]Server{{Name: "up", Target: "http://127.0.0.1:1/mcp"}}, &Options{Logger: slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	w := httptest.NewRecorder()
	req := &jsonrpc.Request{Method: "tools/call"}
	// A call's answer comes from another goroutine (the server's
	// connection's reader): "call" waits for one, "now" does not.
	ask, answer := make(chan struct{}), make(chan struct{})
	go func() {
		for range ask {
			answer <- struct{}{}
		}
	}()
	defer close(ask)
	for _, call := range []bool{false, true} {
		name := "now"
		if call {
			name = "call"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				c := &fastConn{req: req, direct: true, httpCtx: r.Context(), w: w, closed: make(chan struct{})}
				ss, err := g.server.Connect(r.Context(), fastTransport{c}, &mcp.ServerSessionOptions{State: new(mcp.ServerSessionState)})
				if err != nil {
					b.Fatal(err)
				}
				if call {
					ask <- struct{}{}
					<-answer
				}
				_ = ss.Close()
			}
			b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

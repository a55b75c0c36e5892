package gateway

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// FuzzServeHTTP sends the gateway arbitrary request bodies, with and
// without the headers of each era: every request is answered (never a
// panic, never a hang past its deadline), with a status a client can act
// on.
func FuzzServeHTTP(f *testing.F) {
	for _, s := range []string{
		initBody,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"s_echo","arguments":{"text":"x"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"s_echo","arguments":[1]}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"s_book","arguments":{"date":"x"},"requestState":"mcpgw:0123","inputResponses":{"q1":{"action":"accept"}}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{}}`,
		`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"test://x"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"completion/complete","params":{"ref":{"type":"ref/zzz"},"argument":{"name":"a","value":"b"}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`{"jsonrpc":"2.0","id":1e999,"method":"ping"}`,
		strings.Repeat("[", 5000),
		`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"s_greet","arguments":{"a":1}}}`,
		"",
		"\x00\xff",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	// Not quietLogger(f): under -v it writes with f.Log, which panics
	// when called from inside the fuzz target, as the gateway's logging
	// of a request is.
	g, err := New([]Server{{Name: "s", Target: testserver.New(testserver.Options{Resources: true})}}, &Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), MaxRequestBytes: 64 << 10, ParkTimeout: time.Second})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = g.Close() })
	if err := g.Start(context.Background()); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string, modern bool) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if modern {
			req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		}
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			g.ServeHTTP(rec, req)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer within 10s to %q", body)
		}
		if rec.Code >= 500 && rec.Code != http.StatusServiceUnavailable {
			t.Errorf("status %d for %q: %s", rec.Code, body, rec.Body.String())
		}
	})
}

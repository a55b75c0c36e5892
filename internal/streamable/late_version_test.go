package streamable

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestLateAnswersOnlyFrom20260728: go-sdk writes an error bare after a
// call's events only for a request of 2026-07-28 or later (its
// MCP-Protocol-Version header); the event stream of an earlier version's
// POST, or of one without the header, goes through as the server wrote it,
// its body not wrapped (no cost on those calls), even when a server writes
// the call's answer bare after an event.
func TestLateAnswersOnlyFrom20260728(t *testing.T) {
	t.Parallel()
	const req = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t"}}`
	const ev = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n"
	const ans = `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"no"}}`
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, ev+ans)
	}))
	defer ts.Close()
	rt := LateAnswers{Next: ts.Client().Transport, Limit: 1 << 20}
	for _, c := range []struct {
		version string
		want    string
	}{
		{"", ev + ans},
		{"2025-06-18", ev + ans},
		{"2025-11-25", ev + ans},
		{"2026-07-28", ev + "event: message\ndata: " + ans + "\n\n"},
	} {
		hr, err := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(req))
		if err != nil {
			t.Fatal(err)
		}
		hr.Header.Set("Content-Type", "application/json")
		if c.version != "" {
			hr.Header.Set("Mcp-Protocol-Version", c.version)
		}
		resp, err := rt.RoundTrip(hr)
		if err != nil {
			t.Fatal(err)
		}
		_, wrapped := resp.Body.(*lateBody)
		got, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("version %q: read %q, want %q", c.version, got, c.want)
		}
		if wrapped != (c.version >= "2026-07-28") {
			t.Errorf("version %q: body wrapped %v", c.version, wrapped)
		}
	}
}

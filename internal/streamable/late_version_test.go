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

// endless is a server's body that never ends: head, then x's.
type endless struct {
	head []byte
	read int
}

func (e *endless) Read(p []byte) (int, error) {
	n := copy(p, e.head)
	e.head = e.head[n:]
	for i := n; i < len(p); i++ {
		p[i] = 'x'
	}
	e.read += len(p)
	return len(p), nil
}

func (e *endless) Close() error { return nil }

// TestLateAnswersEndlessLine: a server whose line after an event begins
// as an answer would and never ends holds no more than about a quarter over
// the limit (the growth of the line's buffer): the reader gets the line as it came once it passed the limit,
// and reads on through it.
func TestLateAnswersEndlessLine(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	req := `{"jsonrpc":"2.0","id":7,"method":"tools/call"}`
	hr, err := http.NewRequest(http.MethodPost, "http://x/mcp", strings.NewReader(req))
	if err != nil {
		t.Fatal(err)
	}
	src := &endless{head: []byte("event: message\ndata: {}\n\n{\"jsonrpc\":\"2.0\",\"id\":7,")}
	b := &lateBody{rc: src, req: hr, limit: limit, boundary: true}
	buf := make([]byte, 4<<10)
	got := 0
	for got < 8*limit {
		n, err := b.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got += n
		if src.read-got > limit+limit/4+2*len(buf) {
			t.Fatalf("%d bytes read from the server, %d handed out: holds %d, limit %d", src.read, got, src.read-got, limit)
		}
	}
}

package mcpadapter_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"encoding/json"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// httpServers are the HTTP ways of serving the test server's tools as a
// separate process: the client's memory is then the client's alone.
var httpServers = []struct {
	name  string
	flags []string
}{
	{"streamable-sse", []string{"-transport", "http", "-era", "legacy"}},
	{"streamable-json", []string{"-transport", "http", "-era", "legacy", "-json-response"}},
	{"legacy-sse", []string{"-transport", "sse", "-era", "legacy"}},
}

// sessionRecorder is an http.RoundTripper that records which session each
// request belongs to: the Mcp-Session-Id header, or for the legacy
// transport the number of event streams opened (one per connection).
type sessionRecorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	ids  map[string]bool
	gets int
}

func (r *sessionRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	if id := req.Header.Get("Mcp-Session-Id"); id != "" {
		r.ids[id] = true
	}
	if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/sse") {
		r.gets++
	}
	r.mu.Unlock()
	return r.base.RoundTrip(req)
}

// sessions is how many sessions (or legacy event streams) were used.
func (r *sessionRecorder) sessions() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ids) + r.gets
}

// envMB returns the number of MiB in the environment variable name, or
// def.
func envMB(t *testing.T, name string, def int) int {
	if s := os.Getenv(name); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 || n > 1024 {
			t.Fatalf("%s=%q: want 1 to 1024", name, s)
		}
		return n
	}
	return def
}

// A response over MaxMessageBytes over HTTP — a streamable event, a
// streamable JSON body, a legacy SSE event — fails its own call with the
// error result a stdio server's oversized line gives, without the client
// holding more than the limit; the session stays. (Before: go-sdk read the
// whole body or event; the legacy transport failed the connection at its
// own 16 MiB cap.)
//
// MCPADAPTER_HOSTILE_MB sets the response's size (50 MiB; 20 MiB under
// -race, where 50 take over 15 s on a busy 2-core machine),
// MCPADAPTER_HOSTILE_LIMIT_MB the limit (8 MiB).
func TestHostileHTTPBigResponseOverLimit(t *testing.T) {
	def := 50
	if raceEnabled() {
		def = 20
	}
	size := envMB(t, "MCPADAPTER_HOSTILE_MB", def)
	limit := envMB(t, "MCPADAPTER_HOSTILE_LIMIT_MB", 8) * mib
	for _, hs := range httpServers {
		t.Run(hs.name, func(t *testing.T) {
			ctx := testCtx(t)
			p := testserver.StartProcess(t, hs.flags...)
			rec := &sessionRecorder{base: http.DefaultTransport.(*http.Transport).Clone(), ids: map[string]bool{}}
			c, err := mcpadapter.NewClient(p.URL, &mcpadapter.ClientOptions{Name: "huge", MaxMessageBytes: limit,
				HTTPClient: &http.Client{Transport: rec}, Logger: quietLogger()})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			echoOK(t, ctx, c, "before the big one")
			m := watchMemory()
			start := time.Now()
			cctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound, not a speed: -race on a loaded machine reads 20 MiB slowly
			defer cancel()
			res, err := c.CallTool(cctx, "big", json.RawMessage(fmt.Sprintf(`{"mb":%d}`, size)), nil)
			d := time.Since(start)
			mem := m.end()
			t.Logf("HOSTILE http-big transport=%s limit=%dMiB response=%dMiB took=%v %s peak_rss=%s", hs.name, limit/mib, size, d.Round(time.Millisecond), mem, peakRSS())
			if err != nil {
				t.Fatalf("big: %v, want an error result", err)
			}
			if !res.IsError || !strings.Contains(res.Text(), "too large") ||
				!strings.Contains(res.Text(), fmt.Sprintf("the limit is %d bytes", limit)) || !strings.Contains(res.Text(), `"big"`) {
				t.Fatalf("big: %q, want an error result naming the tool, the size and the limit", res.Text())
			}
			t.Logf("caller sees: %q", res.Text())
			if mem.peakGrow > 3*int64(limit) {
				t.Errorf("memory: %s; the client holds more than the limit", mem)
			}
			if mem.retained > 4*mib {
				t.Errorf("memory retained after the call: %s", mem)
			}
			echoOK(t, ctx, c, "after the big one")
			if n := rec.sessions(); n != 1 {
				t.Errorf("%d sessions used, want the first one kept", n)
			}
		})
	}
}

// peakRSS returns the process's peak resident set (VmHWM), where /proc
// tells it.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.ReplaceAll(strings.TrimSpace(v), " ", "")
		}
	}
	return "unknown"
}

// Under the limit, a big response over HTTP arrives whole.
func TestHostileHTTPBigResponseWithinLimit(t *testing.T) {
	for _, hs := range httpServers {
		t.Run(hs.name, func(t *testing.T) {
			ctx := testCtx(t)
			p := testserver.StartProcess(t, hs.flags...)
			c, err := mcpadapter.NewClient(p.URL, &mcpadapter.ClientOptions{Name: "big", MaxMessageBytes: 8 * mib, Logger: quietLogger()})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			res, err := c.CallTool(ctx, "big", json.RawMessage(`{"mb":4}`), nil)
			if err != nil || res.IsError {
				t.Fatalf("big 4 MiB under 8 MiB: %v %v", err, res)
			}
			if got := res.Text(); got != testserver.BigText(4) {
				t.Errorf("got %d bytes, want %d", len(got), 4*mib)
			}
		})
	}
}

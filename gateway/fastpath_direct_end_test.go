package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// lateWriter is a response writer that counts what is written to it once
// its handler has returned.
type lateWriter struct {
	http.ResponseWriter
	returned atomic.Bool
	late     *atomic.Int32
}

func (w *lateWriter) check() {
	if w.returned.Load() {
		w.late.Add(1)
	}
}

func (w *lateWriter) Write(p []byte) (int, error) { w.check(); return w.ResponseWriter.Write(p) }
func (w *lateWriter) WriteHeader(code int)        { w.check(); w.ResponseWriter.WriteHeader(code) }
func (w *lateWriter) Flush() {
	w.check()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
func (w *lateWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// requestSessions returns how many sessions of g's server are a request's
// own (the fast path's, which have no session id).
func requestSessions(g *Gateway) int {
	n := 0
	for ss := range g.server.Sessions() {
		if ss.ID() == "" {
			n++
		}
	}
	return n
}

// TestFastPathDirectCallEnds: a 2026-07-28 client's direct call
// (direct.go) in flight, whose session the gateway's server holds while
// it runs, ends at once when the gateway closes, when the client goes
// away, and when the request's context is cancelled (by a middleware in
// front of the gateway): Close returns, the handler returns, the call's
// session is gone from the server, no goroutine is left, and nothing is
// written to the response after the handler returned.
func TestFastPathDirectCallEnds(t *testing.T) {
	bin := testserver.Build(t)
	for _, end := range []string{"gateway closes", "client goes away", "request cancelled"} {
		t.Run(strings.ReplaceAll(end, " ", "_"), func(t *testing.T) {
			// The server is a process of its own: the goroutines counted
			// are the gateway's and its client's.
			g, err := New([]Server{{Name: "up", Target: mcpadapter.Command{Path: bin}}}, &Options{Logger: quietLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = g.Close() })
			if err := g.Start(testCtx(t, 30*time.Second)); err != nil {
				t.Fatal(err)
			}
			var late atomic.Int32
			cancels := make(chan context.CancelFunc, 1)
			returned := make(chan struct{}, 1)
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ctx, cancel := context.WithCancel(r.Context())
				defer cancel()
				cancels <- cancel // one request only
				lw := &lateWriter{ResponseWriter: w, late: &late}
				g.ServeHTTP(lw, r.WithContext(ctx))
				lw.returned.Store(true)
				returned <- struct{}{}
			}))
			t.Cleanup(ts.Close)
			body := fastCall("1", `"slow"`, `{"ms":120000}`)
			probe := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
			for k, v := range fastHeaders("slow") {
				probe.Header.Set(k, v)
			}
			if f := g.fastRequestOf(probe); f == nil || f.call == nil {
				t.Fatalf("the call is not direct: %+v", f)
			}

			base := runtime.NumGoroutine()
			clientCtx, goAway := context.WithCancel(context.Background())
			defer goAway()
			posted := make(chan string, 1)
			go func() {
				status, body := fastPost(clientCtx, ts.URL+"/mcp", "slow", body)
				posted <- itoa(status) + " " + body
			}()
			waitUntil(t, "the call in flight", func() bool { return g.inflightCount() == 1 })
			if n := requestSessions(g); n != 1 {
				t.Errorf("%d sessions of a request while its direct call runs, want its own", n)
			}
			switch end {
			case "gateway closes":
				closed := make(chan error, 1)
				go func() { closed <- g.Close() }()
				select {
				case err := <-closed:
					if err != nil {
						t.Errorf("Close: %v", err)
					}
				case <-time.After(20 * time.Second):
					t.Fatal("Close waits for the direct call in flight")
				}
			case "client goes away":
				goAway()
			case "request cancelled":
				(<-cancels)()
			}
			select {
			case <-returned:
			case <-time.After(20 * time.Second):
				t.Fatal("the handler did not return")
			}
			select {
			case got := <-posted:
				if strings.Contains(got, `"result"`) {
					t.Errorf("the call that ended was answered: %.300s", got)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the client's request did not end")
			}
			waitUntil(t, "no call in flight", func() bool { return g.inflightCount() == 0 })
			waitUntil(t, "no session of a request", func() bool { return requestSessions(g) == 0 })
			http.DefaultClient.CloseIdleConnections()
			if n := settleGoroutines(base); n > base {
				buf := make([]byte, 1<<20)
				t.Errorf("%d goroutines after the call ended, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
			}
			if n := late.Load(); n != 0 {
				t.Errorf("%d writes to the response after its handler returned", n)
			}
		})
	}
}

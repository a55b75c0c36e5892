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

// TestFastPathDirectCallEnds: 2026-07-28 clients' direct calls
// (direct.go) in flight, whose sessions the gateway's server holds while
// they run, end at once when the gateway closes, when their clients go
// away, and when their requests' contexts are cancelled (by a middleware
// in front of the gateway): Close returns, the handlers return, the calls'
// sessions are gone from the server, no goroutine is left, and nothing is
// written to a response after its handler returned. Each way ends calls
// calls (at once when the gateway closes, one after another otherwise):
// the goroutines counted may move by one that the server's connection
// starts on its own, not by one per call.
func TestFastPathDirectCallEnds(t *testing.T) {
	const calls = 4
	bin := testserver.Build(t)
	for _, end := range []string{"gateway closes", "client goes away", "request cancelled"} {
		t.Run(strings.ReplaceAll(end, " ", "_"), func(t *testing.T) {
			// The server is a process of its own: the goroutines counted
			// are the gateway's and its clients'.
			g, err := New([]Server{{Name: "up", Target: mcpadapter.Command{Path: bin}}}, &Options{Logger: quietLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = g.Close() })
			if err := g.Start(testCtx(t, 30*time.Second)); err != nil {
				t.Fatal(err)
			}
			var late atomic.Int32
			cancels := make(chan context.CancelFunc, calls+1)
			returned := make(chan struct{}, calls+1)
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ctx, cancel := context.WithCancel(r.Context())
				defer cancel()
				cancels <- cancel
				lw := &lateWriter{ResponseWriter: w, late: &late}
				g.ServeHTTP(lw, r.WithContext(ctx))
				lw.returned.Store(true)
				returned <- struct{}{}
			}))
			t.Cleanup(ts.Close)
			u := ts.URL + "/mcp"
			body := fastCall("1", `"slow"`, `{"ms":120000}`)
			probe := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
			for k, v := range fastHeaders("slow") {
				probe.Header.Set(k, v)
			}
			if f := g.fastRequestOf(probe); f == nil || f.call == nil {
				t.Fatalf("the call is not direct: %+v", f)
			}
			// A call first, answered: what the server's connection starts
			// for a call is there before the count.
			if status, got := fastPost(testCtx(t, 30*time.Second), u, "slow", fastCall("1", `"slow"`, `{"ms":1}`)); status != http.StatusOK || !strings.Contains(got, `"result"`) {
				t.Fatalf("a call: %d %.300s", status, got)
			}
			<-cancels
			<-returned
			http.DefaultClient.CloseIdleConnections()
			base := runtime.NumGoroutine()

			type call struct {
				goAway context.CancelFunc
				posted chan string
			}
			start := func() call {
				ctx, goAway := context.WithCancel(context.Background())
				c := call{goAway, make(chan string, 1)}
				go func() {
					status, body := fastPost(ctx, u, "slow", body)
					c.posted <- itoa(status) + " " + body
				}()
				return c
			}
			ended := func(c call) {
				t.Helper()
				select {
				case <-returned:
				case <-time.After(20 * time.Second):
					t.Fatal("a handler did not return")
				}
				select {
				case got := <-c.posted:
					if strings.Contains(got, `"result"`) {
						t.Errorf("a call that ended was answered: %.300s", got)
					}
				case <-time.After(20 * time.Second):
					t.Fatal("a client's request did not end")
				}
				c.goAway()
			}
			if end == "gateway closes" {
				var cs []call
				for range calls {
					cs = append(cs, start())
				}
				waitUntil(t, "the calls in flight", func() bool { return g.inflightCount() == calls })
				if n := requestSessions(g); n != calls {
					t.Errorf("%d sessions of a request while %d direct calls run, want one each", n, calls)
				}
				closed := make(chan error, 1)
				go func() { closed <- g.Close() }()
				select {
				case err := <-closed:
					if err != nil {
						t.Errorf("Close: %v", err)
					}
				case <-time.After(20 * time.Second):
					t.Fatal("Close waits for the direct calls in flight")
				}
				for _, c := range cs {
					ended(c)
				}
			} else {
				for range calls {
					c := start()
					cancel := <-cancels
					waitUntil(t, "the call in flight", func() bool { return g.inflightCount() == 1 })
					if n := requestSessions(g); n != 1 {
						t.Errorf("%d sessions of a request while its direct call runs, want its own", n)
					}
					if end == "client goes away" {
						c.goAway()
					} else {
						cancel()
					}
					ended(c)
					waitUntil(t, "no call in flight", func() bool { return g.inflightCount() == 0 })
				}
			}
			waitUntil(t, "no call in flight", func() bool { return g.inflightCount() == 0 })
			waitUntil(t, "no session of a request", func() bool { return requestSessions(g) == 0 })
			http.DefaultClient.CloseIdleConnections()
			if n := settleGoroutines(base + 1); n > base+1 {
				buf := make([]byte, 1<<20)
				t.Errorf("%d goroutines after %d calls ended, %d before:\n%s", n, calls, base, buf[:runtime.Stack(buf, true)])
			}
			if n := late.Load(); n != 0 {
				t.Errorf("%d writes to a response after its handler returned", n)
			}
		})
	}
}

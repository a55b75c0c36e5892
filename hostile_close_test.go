package mcpadapter_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// closeBound is how long a Close may take with a hostile server: its
// grace for the requests and notices in flight, then go-sdk's close (over
// stdio, the process's stop: another grace, then its group killed).
const closeBound = 2*closeGrace + time.Second

// TestCloseTellsServerOf200CallsInFlight closes a Client with 200 calls in
// flight, over each transport and path: the server is told of each one,
// once, within the grace, and nothing of the client is left running.
func TestCloseTellsServerOf200CallsInFlight(t *testing.T) {
	for _, tr := range closeTransports {
		for _, sdkPath := range []bool{false, true} {
			t.Run(tr+"/"+pathName(sdkPath), func(t *testing.T) {
				srv := newCloseServer(t, tr)
				before := runtime.NumGoroutine()
				closeInFlight(t, srv, sdkPath, 200, 0)
				testenv.WaitGoroutines(t, before)
			})
		}
	}
}

// pathName names the path ClientOptions.DisableFastPath asks for.
func pathName(sdkPath bool) string {
	if sdkPath {
		return "DisableFastPath"
	}
	return "fast path"
}

// TestCloseStdioServerStopsReading closes a Client whose stdio server
// stopped reading its stdin with a slow call in flight and 200 calls
// behind it, whose writes fill the pipe: Close ends within its bound,
// every call returns, the process is gone and no goroutine is left.
func TestCloseStdioServerStopsReading(t *testing.T) {
	for _, sdkPath := range []bool{false, true} {
		t.Run(pathName(sdkPath), func(t *testing.T) {
			srv := newCloseServer(t, "stdio", "-stop-reading", "slow")
			before := runtime.NumGoroutine()
			ctx := testCtx(t)
			opts := srv.options()
			opts.DisableFastPath = sdkPath
			c, err := mcpadapter.NewClient(srv.target, opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Connect(ctx); err != nil {
				t.Fatal(err)
			}
			ended := srv.startSlowCalls(ctx, c, 1)
			srv.waitCalls(t, 1, "the slow call")
			text, _ := json.Marshal(map[string]string{"text": strings.Repeat("x", 2048)})
			for range 200 {
				go func() {
					_, err := c.CallTool(ctx, "echo", text, nil)
					ended <- err
				}()
			}
			time.Sleep(300 * time.Millisecond) // the pipe fills
			// Its grace for the requests and notices being written, then
			// the process's stop: stdin closed, a grace, SIGTERM, a grace.
			closeWithin(t, c, 3*closeGrace+time.Second)
			waitEnded(t, ended, 201)
			srv.processGone(t)
			testenv.WaitGoroutines(t, before)
		})
	}
}

// TestCloseServerEndsConnectionMidClose closes a Client whose server
// ends the connection when it gets the first notifications/cancelled
// (the stdio process is killed; the HTTP server closes every connection
// and answers no more): Close ends within its bound, every call
// returns, and nothing is left running.
func TestCloseServerEndsConnectionMidClose(t *testing.T) {
	for _, tr := range closeTransports {
		for _, sdkPath := range []bool{false, true} {
			t.Run(tr+"/"+pathName(sdkPath), func(t *testing.T) {
				var srv *closeServer
				if tr == "stdio" {
					srv = newCloseServer(t, tr)
					var once sync.Once
					srv.process.on = func(method, pid string) {
						if method == "notifications/cancelled" {
							once.Do(func() {
								if n, err := strconv.Atoi(pid); err == nil {
									_ = syscall.Kill(n, syscall.SIGKILL)
								}
							})
						}
					}
				} else {
					srv = hostileHTTPServer(t, tr, func(hs *httptest.Server, w http.ResponseWriter) {
						hs.CloseClientConnections()
						hs.Config.SetKeepAlivesEnabled(false)
						panic(http.ErrAbortHandler) // this request's connection too
					})
				}
				closeHostile(t, srv, sdkPath, 20)
			})
		}
	}
}

// TestCloseServerAnswersNoticesSlowly closes a Client whose HTTP server
// answers each notifications/cancelled after 3 s, past the close's grace:
// Close ends within its bound, every call returns, and nothing is left
// running.
func TestCloseServerAnswersNoticesSlowly(t *testing.T) {
	for _, tr := range closeTransports[1:] {
		for _, sdkPath := range []bool{false, true} {
			t.Run(tr+"/"+pathName(sdkPath), func(t *testing.T) {
				srv := hostileHTTPServer(t, tr, func(*httptest.Server, http.ResponseWriter) {
					time.Sleep(3 * time.Second)
				})
				closeHostile(t, srv, sdkPath, 20)
			})
		}
	}
}

// closeHostile closes a Client of srv with n slow calls in flight and
// checks that it ended within closeBound, that every call returned, and
// that nothing was left running.
func closeHostile(t *testing.T, srv *closeServer, sdkPath bool, n int) {
	t.Helper()
	before := runtime.NumGoroutine()
	ctx := testCtx(t)
	opts := srv.options()
	opts.DisableFastPath = sdkPath
	c, err := mcpadapter.NewClient(srv.target, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	ended := srv.startSlowCalls(ctx, c, n)
	srv.waitCalls(t, n, "the slow calls")
	closeWithin(t, c, closeBound)
	waitEnded(t, ended, n)
	if srv.process != nil {
		srv.processGone(t)
	}
	// The test server's sessions are its own: one whose connections a
	// hostile server dropped is not the client's to end.
	testenv.WaitGoroutinesExcept(t, before, "mcp.(*streamableServerConn)", "mcp.(*SSEServerTransport)", "mcp.(*sseServerConn)")
}

// closeWithin closes c and fails the test if that took longer than bound.
func closeWithin(t *testing.T, c *mcpadapter.Client, bound time.Duration) {
	t.Helper()
	start := time.Now()
	_ = c.Close() // the server's misbehaviour may be its error
	took := time.Since(start)
	t.Logf("Close took %v", took)
	if took > bound {
		t.Errorf("Close took %v, want at most %v", took, bound)
	}
}

// waitEnded waits up to 10 s for n calls' errors on ended, each of which
// must be an error.
func waitEnded(t *testing.T, ended <-chan error, n int) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for i := range n {
		select {
		case err := <-ended:
			if err == nil {
				t.Errorf("a call in flight at Close succeeded")
			}
		case <-timeout:
			t.Fatalf("%d of the %d calls in flight at Close did not return", n-i, n)
		}
	}
}

// processGone fails the test unless the stdio server's process has gone.
func (s *closeServer) processGone(t *testing.T) {
	t.Helper()
	s.process.mu.Lock()
	pid := s.process.pid
	s.process.mu.Unlock()
	n, err := strconv.Atoi(pid)
	if err != nil {
		t.Fatalf("no pid of the stdio server (%q)", pid)
	}
	if !processGone(n) {
		t.Errorf("the stdio server (pid %d) outlived Close", n)
	}
}

// hostileHTTPServer serves a handshake-era test server over tr
// ("streamable" or "sse") that calls misbehave on each POST of a
// notifications/cancelled before it passes it on (if misbehave returns).
// The slow calls it gets last 4 s: a handler the server was not told of
// ends by itself before the goroutine check gives up.
func hostileHTTPServer(t *testing.T, tr string, misbehave func(*httptest.Server, http.ResponseWriter)) *closeServer {
	t.Helper()
	srv, state := testserver.NewWithState(testserver.Options{Era: testserver.Legacy})
	var h http.Handler
	if tr == "sse" {
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	} else {
		h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	}
	hs := httptest.NewUnstartedServer(nil)
	var (
		mu   sync.Mutex
		told int
	)
	hs.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"notifications/cancelled"`)) {
				mu.Lock()
				told++
				mu.Unlock()
				misbehave(hs, w)
			}
		}
		h.ServeHTTP(w, r)
	})
	hs.Start()
	t.Cleanup(hs.Close)
	path := "/mcp"
	if tr == "sse" {
		path = "/sse"
	}
	return &closeServer{target: hs.URL + path, transport: tr, state: state, slowMs: 4000}
}

// TestCloseConcurrentWaitsForFirst calls Close twice at once on a Client
// whose stdio server stopped reading (so the first Close takes its grace):
// the second Close returns only once the first has ended: every call in
// flight has returned and the server's process is gone, as after the
// first.
func TestCloseConcurrentWaitsForFirst(t *testing.T) {
	for _, sdkPath := range []bool{false, true} {
		t.Run(pathName(sdkPath), func(t *testing.T) {
			srv := newCloseServer(t, "stdio", "-stop-reading", "slow")
			before := runtime.NumGoroutine()
			ctx := testCtx(t)
			opts := srv.options()
			opts.DisableFastPath = sdkPath
			c, err := mcpadapter.NewClient(srv.target, opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Connect(ctx); err != nil {
				t.Fatal(err)
			}
			ended := srv.startSlowCalls(ctx, c, 1)
			srv.waitCalls(t, 1, "the slow call")
			first := make(chan time.Time, 1)
			go func() {
				_ = c.Close()
				first <- time.Now()
			}()
			time.Sleep(200 * time.Millisecond) // the first Close waits for its grace
			closeWithin(t, c, closeBound)
			second := time.Now()
			srv.processGone(t)
			select {
			case <-ended:
			default:
				t.Errorf("the second Close returned before the call in flight did")
			}
			// Both end with the session's close; the first then has
			// only the client's own bookkeeping left.
			if f := <-first; f.After(second.Add(200 * time.Millisecond)) {
				t.Errorf("the second Close returned %v before the first", f.Sub(second))
			}
			testenv.WaitGoroutines(t, before)
		})
	}
}

// TestCloseServerRefusesNotices closes a Client whose HTTP server answers
// each notifications/cancelled with an error (500, or a JSON-RPC error): Close ends within its bound, every
// call returns, and nothing is left running.
func TestCloseServerRefusesNotices(t *testing.T) {
	answers := []struct {
		name, contentType, body string
		status                  int
	}{
		{"500", "text/plain", "boom", http.StatusInternalServerError},
		{"rpc error", "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no"}}`, http.StatusOK},
	}
	for _, tr := range closeTransports[1:] {
		for _, a := range answers {
			for _, sdkPath := range []bool{false, true} {
				t.Run(tr+"/"+a.name+"/"+pathName(sdkPath), func(t *testing.T) {
					srv := hostileHTTPServer(t, tr, func(_ *httptest.Server, w http.ResponseWriter) {
						w.Header().Set("Content-Type", a.contentType)
						w.Header().Set("Content-Length", strconv.Itoa(len(a.body)))
						w.WriteHeader(a.status)
						_, _ = io.WriteString(w, a.body)
						w.(http.Flusher).Flush()
						panic(http.ErrAbortHandler) // the handler ends here, answered
					})
					closeHostile(t, srv, sdkPath, 20)
				})
			}
		}
	}
}

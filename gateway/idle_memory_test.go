package gateway

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// idleHold says what an idle client session keeps open besides the
// session itself.
type idleHold int

const (
	// holdNothing: every request on a connection of its own, closed
	// after its answer.
	holdNothing idleHold = iota
	// holdKeepAlive: one keep-alive connection per session, kept idle.
	holdKeepAlive
	// holdStream: the keep-alive connection and the session's
	// standalone stream (GET), as a go-sdk client keeps them.
	holdStream
)

func (h idleHold) String() string {
	return [...]string{"session", "session+keep-alive", "session+keep-alive+GET stream"}[h]
}

// idleCost is what one idle session holds in the process, on average.
type idleCost struct {
	heap, stack float64 // bytes: live heap after a collection, goroutine stacks
	goroutines  float64
}

func (c idleCost) String() string {
	return fmt.Sprintf("heap %.1f KiB + stacks %.1f KiB = %.1f KiB, %.2f goroutines per session",
		c.heap/1024, c.stack/1024, (c.heap+c.stack)/1024, c.goroutines)
}

// idleClient is a handshake-era client session made of raw HTTP/1.1
// requests on loopback connections: all it holds is its connections, so
// that what the process holds per session is the server side's.
type idleClient struct {
	addr string
	id   string
	conn net.Conn // the keep-alive connection (holdKeepAlive, holdStream)
	get  net.Conn // the standalone stream's (holdStream)
}

// openIdle initializes a session, sends notifications/initialized, lists
// the tools and opens what hold says.
func openIdle(ctx context.Context, addr string, hold idleHold) (*idleClient, error) {
	c := &idleClient{addr: addr}
	steps := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"idle","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	}
	for i, body := range steps {
		resp, err := c.post(ctx, body, hold != holdNothing)
		if err != nil {
			c.close()
			return nil, fmt.Errorf("message %d of the session: %w", i, err)
		}
		if i == 2 && !strings.Contains(resp, `"echo"`) {
			c.close()
			return nil, fmt.Errorf("tools/list: no echo in %q", resp)
		}
	}
	if hold == holdStream {
		if err := c.openStream(ctx); err != nil {
			c.close()
			return nil, err
		}
	}
	return c, nil
}

// post sends body as a POST of the session, on the kept connection when
// keep says so, and returns the answer's body.
func (c *idleClient) post(ctx context.Context, body string, keep bool) (string, error) {
	conn := c.conn
	if conn == nil {
		var err error
		if conn, err = (&net.Dialer{}).DialContext(ctx, "tcp", c.addr); err != nil {
			return "", err
		}
		if keep {
			c.conn = conn
		} else {
			defer conn.Close()
		}
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
		defer conn.SetDeadline(time.Time{})
	}
	var h strings.Builder
	fmt.Fprintf(&h, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n", c.addr, len(body))
	if c.id != "" {
		fmt.Fprintf(&h, "Mcp-Session-Id: %s\r\nMcp-Protocol-Version: %s\r\n", c.id, v1125)
	}
	if !keep {
		h.WriteString("Connection: close\r\n")
	}
	h.WriteString("\r\n")
	h.WriteString(body)
	if _, err := io.WriteString(conn, h.String()); err != nil {
		return "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted {
		return "", fmt.Errorf("%s: %s", resp.Status, b)
	}
	if c.id == "" {
		if c.id = resp.Header.Get("Mcp-Session-Id"); c.id == "" {
			return "", fmt.Errorf("no session id in the answer to initialize: %s", b)
		}
	}
	return string(b), nil
}

// openStream opens the session's standalone stream (GET) and reads its
// header, leaving the stream open.
func (c *idleClient) openStream(ctx context.Context) error {
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return err
	}
	c.get = conn
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
		defer conn.SetDeadline(time.Time{})
	}
	if _, err := fmt.Fprintf(conn, "GET /mcp HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: %s\r\n\r\n", c.addr, c.id, v1125); err != nil {
		return err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("standalone stream: %s", resp.Status)
	}
	return nil
}

// close drops the client's connections (the session stays on the server
// until it ends or the server closes).
func (c *idleClient) close() {
	for _, conn := range []net.Conn{c.conn, c.get} {
		if conn != nil {
			_ = conn.Close()
		}
	}
}

// idleProcess is what the process holds: live heap after a collection,
// goroutine stacks, goroutines.
func idleProcess() (heap, stack int64, goroutines int) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc), int64(ms.StackInuse), runtime.NumGoroutine()
}

// startIdleGateway serves a gateway in front of up (over streamable HTTP,
// stateless) in an http.Server on 127.0.0.1, as mcpadapter serve does (its
// idle connections parked: ParkIdleConnections; with opts nil, its
// streams taken over: Options.TakeOverStreams); it returns the gateway
// and its address.
func startIdleGateway(t testing.TB, opts *Options, up *mcp.Server) (*Gateway, string) {
	t.Helper()
	upURL := testserver.StartStreamable(t, up, testserver.Stateless()).URL
	if opts == nil {
		opts = &Options{TakeOverStreams: true}
	}
	opts.Logger = slog.New(slog.DiscardHandler)
	g, err := New([]Server{{Name: "up", Target: upURL}}, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = g.Close() })
	if err := g.Start(testCtx(t, 30*time.Second)); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return g, serveHTTP(t, g, true)
}

// serveIdle serves h in an http.Server on 127.0.0.1 until the test ends
// and returns its address.
func serveIdle(t testing.TB, h http.Handler) string {
	t.Helper()
	return serveHTTP(t, h, false)
}

// serveHTTP serves h in an http.Server on 127.0.0.1 until the test ends,
// its idle connections parked if park says so (ParkIdleConnections), and
// returns its address.
func serveHTTP(t testing.TB, h http.Handler, park bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if park {
		ln = ParkIdleConnections(srv, ln)
	}
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close(); <-served })
	return ln.Addr().String()
}

// measureIdleSessions opens n idle sessions to the server at addr, as
// hold says, and returns what each holds in the process on average;
// sessions says how many sessions the server holds. The sessions'
// connections are closed when the test ends.
func measureIdleSessions(t testing.TB, addr string, n int, hold idleHold, sessions func() int) idleCost {
	t.Helper()
	ctx := testCtx(t, 5*time.Minute)
	// One session first, so that what the first one makes once (the
	// catalog's encoded lists, pools) is not counted.
	warm, err := openIdle(ctx, addr, hold)
	if err != nil {
		t.Fatalf("the first session: %v", err)
	}
	t.Cleanup(warm.close)
	heap0, stack0, g0 := idleProcess()
	clients := make([]*idleClient, n)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		sem   = make(chan struct{}, 8)
	)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			c, err := openIdle(ctx, addr, hold)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && first == nil {
				first = err
			}
			clients[i] = c
		})
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, c := range clients {
			if c != nil {
				c.close()
			}
		}
	})
	if first != nil {
		t.Fatalf("opening %d idle sessions: %v", n, first)
	}
	// Wait (for 5 seconds at the most) for the server to have settled:
	// every session's goroutines parked, the connections of the closed
	// requests gone (the same goroutines in three reads in a row).
	var heap1, stack1 int64
	g1, same := -1, 0
	for range 100 {
		time.Sleep(50 * time.Millisecond)
		h, s, gs := idleProcess()
		if gs == g1 {
			same++
		} else {
			same = 0
		}
		heap1, stack1, g1 = h, s, gs
		if same == 2 {
			break
		}
	}
	if got := sessions(); got < n+1 {
		t.Fatalf("%d live sessions, want %d", got, n+1)
	}
	runtime.KeepAlive(clients)
	return idleCost{
		heap:       float64(heap1-heap0) / float64(n),
		stack:      float64(stack1-stack0) / float64(n),
		goroutines: float64(g1-g0) / float64(n),
	}
}

// TestIdleSessionHolds: an idle handshake-era session (initialized,
// tools listed, its connections closed) of a gateway in front of a server
// of 45 tools holds in the gateway's process one goroutine (go-sdk's
// reader of the session's messages) and a bounded heap, with and without
// Options.Telemetry timing sessions: nothing waits for the end of each
// session, and the answers every session keeps for a client that resumes
// its stream (initialize's, tools/list's) are held once for all sessions.
func TestIdleSessionHolds(t *testing.T) {
	const n = 400
	// go-sdk's own session (its connection, the state of its handshake,
	// the request headers it keeps) is about 4.5 KiB; the gateway's
	// record of it and its event store's, without the answers, under
	// 1 KiB; the answers to initialize and tools/list here, about 8 KiB.
	const maxHeap = 7 << 10
	for _, tc := range []struct {
		name string
		opts *Options
	}{
		{"default", nil},
		{"telemetry", &Options{Telemetry: sessionTimer{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, addr := startIdleGateway(t, tc.opts, testserver.New(testserver.Options{Name: "up", Era: testserver.Legacy, ManyTools: true}))
			c := measureIdleSessions(t, addr, n, holdNothing, func() int { return liveCount(g) })
			t.Logf("%d idle sessions: %v", n, c)
			if c.goroutines > 1.05 {
				t.Errorf("%.2f goroutines per idle session, want 1 (go-sdk's reader)", c.goroutines)
			}
			if c.heap > maxHeap {
				t.Errorf("%.1f KiB of heap per idle session, want at most %d KiB", c.heap/1024, maxHeap>>10)
			}
		})
	}
}

// sessionTimer is a Telemetry that times sessions and records nothing.
type sessionTimer struct{}

func (sessionTimer) StartServerOperation(ctx context.Context, _ mcpadapter.ServerOperation) (context.Context, func(mcpadapter.ServerOperationResult)) {
	return ctx, func(mcpadapter.ServerOperationResult) {}
}

func (sessionTimer) InjectMeta(context.Context, map[string]any) {}

func (sessionTimer) EndServerSession(context.Context, mcpadapter.ServerSessionEnd) {}

// BenchmarkIdleSessionHeld measures what an idle handshake-era session
// (initialize, notifications/initialized, tools/list, from a client made
// of raw HTTP requests) holds in the process of a gateway in front of a
// go-sdk server, next to go-sdk's streamable handler serving that server
// itself ("direct"): the live heap after a collection, the goroutine
// stacks and the goroutines, per session, with nothing else open, with
// the session's keep-alive connection kept idle, and with that and the
// session's standalone stream (GET) open as a go-sdk client keeps them.
// Each op opens one session (-benchtime 1000x). With
// GATEWAY_IDLE_PROFILE=PREFIX it writes the heap and goroutine profiles
// of each cell, sessions open, to PREFIX-CELL.heap and .goroutine.
func BenchmarkIdleSessionHeld(b *testing.B) {
	prefix := os.Getenv("GATEWAY_IDLE_PROFILE")
	for _, side := range []string{"gateway", "direct"} {
		for _, hold := range []idleHold{holdNothing, holdKeepAlive, holdStream} {
			b.Run(side+"/"+hold.String(), func(b *testing.B) {
				srv := testserver.NewMinimal(testserver.Options{Name: "up", Era: testserver.Legacy})
				var addr string
				var sessions func() int
				if side == "gateway" {
					g, a := startIdleGateway(b, nil, srv)
					addr, sessions = a, func() int { return liveCount(g) }
				} else {
					addr = serveIdle(b, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
					sessions = func() int { return countSessions(srv) }
				}
				c := measureIdleSessions(b, addr, b.N, hold, sessions)
				b.ReportMetric(c.heap, "heap-B/session")
				b.ReportMetric(c.stack, "stack-B/session")
				b.ReportMetric(c.goroutines, "goroutines/session")
				if prefix != "" {
					writeProfiles(b, fmt.Sprintf("%s-%s-%d", prefix, side, hold))
				}
			})
		}
	}
}

// writeProfiles writes the process's heap and goroutine profiles to
// prefix.heap and prefix.goroutine.
func writeProfiles(t testing.TB, prefix string) {
	for _, p := range []string{"heap", "goroutine"} {
		f, err := os.Create(prefix + "." + p)
		if err != nil {
			t.Fatal(err)
		}
		debug := 0
		if p == "goroutine" {
			debug = 1
		}
		err = pprof.Lookup(p).WriteTo(f, debug)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// countSessions is the number of sessions srv holds.
func countSessions(srv *mcp.Server) int {
	n := 0
	for range srv.Sessions() {
		n++
	}
	return n
}

// liveCount is the number of sessions g.live holds.
func liveCount(g *Gateway) int {
	g.live.mu.Lock()
	defer g.live.mu.Unlock()
	return len(g.live.by)
}

// BenchmarkStreamConnHeld measures what a parked event stream (a GET
// answered with text/event-stream headers, then nothing) holds in the
// process, with no MCP in it, served two ways: by net/http, its handler
// parked (the connection's goroutine, its 4 KiB read and write buffers,
// the response's 2 KiB buffer, the request, net/http's background reader
// of the connection), and on the connection hijacked (Connection: close)
// with a goroutine parked where the handler was and one reading the
// connection to see the client go. Each op opens one stream
// (-benchtime 1000x); the figures are per stream, the client's
// connection included (about 0.3 KiB).
func BenchmarkStreamConnHeld(b *testing.B) {
	for _, hijack := range []bool{false, true} {
		name := "net/http"
		if hijack {
			name = "hijacked"
		}
		b.Run(name, func(b *testing.B) {
			release := make(chan struct{})
			park := func(ctx context.Context) {
				select {
				case <-ctx.Done():
				case <-release:
				}
			}
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !hijack {
					w.Header().Set("Content-Type", "text/event-stream")
					w.Header().Set("Cache-Control", "no-cache")
					w.WriteHeader(http.StatusOK)
					http.NewResponseController(w).Flush()
					park(r.Context())
					return
				}
				conn, _, err := http.NewResponseController(w).Hijack()
				if err != nil {
					b.Error(err)
					return
				}
				ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
				_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n")
				go func() {
					var p [1]byte
					_, _ = conn.Read(p[:])
					cancel()
				}()
				go func() {
					park(ctx)
					_ = conn.Close()
				}()
			})
			addr := serveIdle(b, h)
			b.Cleanup(func() { close(release) })
			ctx := testCtx(b, 5*time.Minute)
			open := func() net.Conn {
				conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = conn.Close() })
				if _, err := fmt.Fprintf(conn, "GET /mcp HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: %s\r\n\r\n", addr, strings.Repeat("A", 26), v1125); err != nil {
					b.Fatal(err)
				}
				resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("the stream's answer: %v %v", resp, err)
				}
				return conn
			}
			open()
			heap0, stack0, g0 := idleProcess()
			conns := make([]net.Conn, b.N)
			for i := range b.N {
				conns[i] = open()
			}
			time.Sleep(200 * time.Millisecond) // for the hijacked streams' goroutines to park
			heap1, stack1, g1 := idleProcess()
			runtime.KeepAlive(conns)
			n := float64(b.N)
			b.ReportMetric(float64(heap1-heap0)/n, "heap-B/stream")
			b.ReportMetric(float64(stack1-stack0)/n, "stack-B/stream")
			b.ReportMetric(float64(g1-g0)/n, "goroutines/stream")
		})
	}
}

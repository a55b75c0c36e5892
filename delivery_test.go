package mcpadapter_test

// A request reaches the server once: retried only when it certainly was
// not sent, failures as transport errors, connects shared and bounded per
// caller.

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func countingServer(runs *atomic.Int32, versions []string, d time.Duration) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bank", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: versions})
	mcp.AddTool(srv, &mcp.Tool{Name: "transfer_money"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		runs.Add(1)
		time.Sleep(d)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	return srv
}

// An HTTP failure (a proxy's 503, a server that is gone) is a transport
// error, not a tool result for the model.
func TestHTTPFailureIsTransportError(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	var runs atomic.Int32
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return countingServer(&runs, nil, 0) }, nil)
	var down atomic.Bool
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "upstream unavailable", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()
	c, _ := mcpadapter.NewClient(hs.URL, &mcpadapter.ClientOptions{})
	defer c.Close()
	if _, err := c.CallTool(ctx, "transfer_money", nil, nil); err != nil {
		t.Fatal(err)
	}
	down.Store(true)
	var te *mcpadapter.TransportError
	if res, err := c.CallTool(ctx, "transfer_money", nil, nil); !errors.As(err, &te) {
		t.Errorf("503: %v %+v, want a TransportError", err, res)
	}
	if _, err := c.ListTools(ctx); !errors.As(err, &te) {
		t.Errorf("503 on tools/list: %v, want a TransportError", err)
	}
	hs.CloseClientConnections()
	hs.Listener.Close()
	if res, err := c.CallTool(ctx, "transfer_money", nil, nil); !errors.As(err, &te) {
		t.Errorf("server gone: %v %+v, want a TransportError", err, res)
	}
}

// A call the server already runs is not sent again when the session then
// turns out to be gone (a 404 on the event stream, not on the call's POST).
func TestSessionMissingNoDoubleRun(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return countingServer(&runs, []string{"2025-11-25"}, time.Second) }, nil)
	var mu sync.Mutex
	first, expired := "", false
	var cancels []context.CancelFunc
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("Mcp-Session-Id")
		mu.Lock()
		if first == "" && id != "" {
			first = id
		}
		old := id != "" && id == first
		dead := expired && old
		ctx, cancel := context.WithCancel(r.Context())
		if old && r.Method == http.MethodGet {
			cancels = append(cancels, cancel)
		}
		mu.Unlock()
		defer cancel()
		if dead {
			http.Error(w, "session expired", http.StatusNotFound)
			return
		}
		h.ServeHTTP(w, r.WithContext(ctx))
	}))
	defer hs.Close()
	c, _ := mcpadapter.NewClient(hs.URL+"/mcp", &mcpadapter.ClientOptions{})
	defer c.Close()
	ctx := testCtx(t)
	if _, err := c.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "transfer_money", nil, nil)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	expired = true
	for _, cancel := range cancels {
		cancel()
	}
	mu.Unlock()
	<-done
	time.Sleep(1500 * time.Millisecond)
	if n := runs.Load(); n != 1 {
		t.Fatalf("the tool ran %d times for one call", n)
	}
}

// Over SSE a POST that fails after the server took the message (a proxy's
// 504) is not retried.
func TestSSEPostFailureNotRetried(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	srv := countingServer(&runs, nil, 0)
	h := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var flaky atomic.Bool
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && flaky.Swap(false) {
			h.ServeHTTP(httptest.NewRecorder(), r)
			// The proxy answers 504 once the tool runs (otherwise the
			// client's reaction to the 504 can end the session first).
			for deadline := time.Now().Add(10 * time.Second); runs.Load() == 0 && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
			}
			http.Error(w, "gateway timeout", http.StatusGatewayTimeout)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()
	c, _ := mcpadapter.NewClient(hs.URL+"/sse", &mcpadapter.ClientOptions{})
	defer c.Close()
	ctx := testCtx(t)
	if _, err := c.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	flaky.Store(true)
	_, _ = c.CallTool(ctx, "transfer_money", nil, nil)
	time.Sleep(200 * time.Millisecond) // for a second run that must not come
	if n := runs.Load(); n != 1 {
		t.Fatalf("the tool ran %d times for one call", n)
	}
}

// A caller with a short deadline does not make the others that share its
// connect attempt fail.
func TestSharedDialDeadline(t *testing.T) {
	t.Parallel()
	c, _ := mcpadapter.NewClient(stdioServer(t, "-start-delay", "500ms"), &mcpadapter.ClientOptions{})
	defer c.Close()
	var wg sync.WaitGroup
	wg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := c.CallTool(ctx, "echo", []byte(`{"text":"x"}`), nil)
		if !errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "ConnectTimeout") {
			t.Errorf("impatient caller: %v", err)
		}
	})
	time.Sleep(20 * time.Millisecond)
	res, err := c.CallTool(testCtx(t), "echo", []byte(`{"text":"patient"}`), nil)
	wg.Wait()
	if err != nil || res.Text() != "patient" {
		t.Fatalf("patient caller: %v %+v", err, res)
	}
}

// A server that is alive but refuses initialize is not "restarted after
// exiting during the probe".
func TestRefusedInitializeNotRestarted(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	c, _ := mcpadapter.NewClient(stdioServer(t, "-era", "legacy", "-refuse-initialize"),
		&mcpadapter.ClientOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	defer c.Close()
	_, err := c.Connect(testCtx(t))
	if err == nil || !strings.Contains(err.Error(), "database unavailable") {
		t.Fatalf("connect: %v", err)
	}
	if strings.Contains(logs.String(), "restarting") {
		t.Errorf("restarted a server that had not exited:\n%s", logs.String())
	}
}

// A request whose HTTP dial fails does not kill the other calls in flight.
func TestDialErrorSparesOtherCalls(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "slow"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		time.Sleep(500 * time.Millisecond)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slow done"}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "fast"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "fast done"}}}, nil, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer hs.Close()
	var failNext atomic.Bool
	d := &net.Dialer{}
	tr := &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if failNext.Swap(false) {
			return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("connection refused (transient)")}
		}
		return d.DialContext(ctx, network, addr)
	}}
	c, _ := mcpadapter.NewClient(hs.URL, &mcpadapter.ClientOptions{HTTPClient: &http.Client{Transport: tr}})
	defer c.Close()
	ctx := testCtx(t)
	if _, err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	slow := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "slow", nil, nil)
		slow <- err
	}()
	time.Sleep(100 * time.Millisecond)
	failNext.Store(true)
	if res, err := c.CallTool(ctx, "fast", nil, nil); err != nil || res.Text() != "fast done" {
		t.Errorf("fast call after a failed dial (retried): %v %+v", err, res)
	}
	if err := <-slow; err != nil {
		t.Fatalf("the slow call: %v", err)
	}
}

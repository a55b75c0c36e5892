package mcpadapter_test

// The rest of an event stream after the answer, which the fast path reads
// behind the call (drainRest in internal/streamable).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server that keeps a call's event stream open after the answer (the
// spec says it SHOULD close it, not MUST): the call returns its result
// while the stream is still open, as on go-sdk's path, which hands the
// answer over at once and drains the stream behind it. The server holds
// the stream until the call has returned; a client that waited for the
// stream to end (or gave up on it) before returning shows as a stream
// ended by the client while the call had not returned: its response body
// closed, or read to its end, before the call returned (seen by the
// client's transport, so that it does not depend on when the server
// notices the connection's end).
func TestHTTPFastPathStreamOpenAfterAnswer(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testserver.New(testserver.Options{Era: testserver.Legacy}) }, nil)
	var mu sync.Mutex
	var returned chan struct{}  // closed when the lingering call has returned
	var cutEarly atomic.Int64   // streams the client ended before its call returned
	quit := make(chan struct{}) // ends the streams that never end, at the end
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Method == http.MethodPost {
			body, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
		if bytes.Contains(body, []byte(`"forever"`)) {
			// The answer is written; the stream stays open until the
			// client ends it.
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-quit:
			}
		}
		if bytes.Contains(body, []byte(`"linger"`)) {
			w.(http.Flusher).Flush()
			mu.Lock()
			done := returned
			mu.Unlock()
			select { // the answer is written; the stream stays open
			case <-done:
			case <-r.Context().Done():
				select {
				case <-done:
				default:
					cutEarly.Add(1)
				}
			}
		}
	}))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(quit) })
	for _, disable := range []bool{false, true} {
		ended := &streamEnds{}
		c, err := mcpadapter.NewClient(hs.URL, &mcpadapter.ClientOptions{Logger: quietLogger(), DisableFastPath: disable, HTTPClient: &http.Client{Transport: ended}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		echoOK(t, ctx, c, "first")
		done := make(chan struct{})
		mu.Lock()
		returned = done
		mu.Unlock()
		before := mcpadapter.CallPaths(c)
		within(t, 10*time.Second, fmt.Sprintf("a call whose stream stays open (DisableFastPath %v)", disable), func() {
			echoOK(t, ctx, c, "linger")
		})
		if ended.n.Load() != 0 {
			t.Errorf("DisableFastPath %v: the client ended the lingering stream before the call returned", disable)
		}
		close(done)
		if p := mcpadapter.CallPaths(c).Sub(before); p[engine.PathFast] != 1 && !disable && mcpadapter.FastPathBuilt {
			t.Errorf("the lingering call's paths: %v, want the fast path", p)
		}
		if n := cutEarly.Swap(0); n != 0 {
			t.Errorf("DisableFastPath %v: the client ended the stream before the call returned (it waited for the stream)", disable)
		}
		echoOK(t, ctx, c, "after")
		// A stream the server never ends: the next call does not wait
		// for it (the client drops it after wire.DrainGrace).
		echoOK(t, ctx, c, "forever")
		within(t, 10*time.Second, fmt.Sprintf("a call after a stream that never ends (DisableFastPath %v)", disable), func() {
			echoOK(t, ctx, c, "after forever")
		})
	}
}

// A call right after one whose stream the server ends a little after the
// answer (here when the next request arrives, or 100 ms later) waits for
// that stream to end, and reuses its connection instead of opening
// another: no new TCP connection for the calls after the first.
func TestHTTPFastPathNextCallWaitsForStream(t *testing.T) {
	t.Parallel()
	if !mcpadapter.FastPathBuilt {
		t.Skip("the fast path is not built (-tags mcpadapter_nofastpath): go-sdk's path opens a connection while a stream is open")
	}
	ctx := testCtx(t)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testserver.New(testserver.Options{Era: testserver.Legacy}) }, nil)
	arrived := make(chan struct{}, 16) // a request arrived
	var conns atomic.Int64
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Method == http.MethodPost {
			body, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		select {
		case arrived <- struct{}{}:
		default:
		}
		h.ServeHTTP(w, r)
		if bytes.Contains(body, []byte(`"brief"`)) {
			w.(http.Flusher).Flush()
			for len(arrived) > 0 {
				<-arrived
			}
			select { // the answer is written; the stream ends a little later
			case <-arrived:
			case <-time.After(100 * time.Millisecond):
			case <-r.Context().Done():
			}
		}
	}))
	hs.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	hs.Start()
	t.Cleanup(hs.Close)
	c, err := mcpadapter.NewClient(hs.URL, &mcpadapter.ClientOptions{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	echoOK(t, ctx, c, "first")
	before, paths := conns.Load(), mcpadapter.CallPaths(c)
	const calls = 5
	for i := range calls {
		echoOK(t, ctx, c, "brief")
		echoOK(t, ctx, c, fmt.Sprint(i))
	}
	if p := mcpadapter.CallPaths(c).Sub(paths); p[engine.PathFast] != 2*calls {
		t.Errorf("paths: %s, want all on the fast path", describePaths(p))
	}
	if n := conns.Load() - before; n != 0 {
		t.Errorf("%d calls, each after a stream that ends after its answer, opened %d new TCP connections", calls, n)
	}
}

// A server that keeps every call's stream open after the answer (it may:
// the spec says it SHOULD close it) until the client ends it does not
// make each call wait for the stream of the call before, as go-sdk's path
// does not: once one such stream was given up (after wire.DrainGrace), the
// next calls go out while the streams before them are still open. The
// server counts the streams the client ended while no later call had
// come (each one a call that waited for wire.DrainGrace).
func TestHTTPFastPathLingeringStreamsDoNotHoldCalls(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testserver.New(testserver.Options{Era: testserver.Legacy}) }, nil)
	const n = 6
	var calls atomic.Int64 // tools/call POSTs so far
	var waited atomic.Int64
	quit := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Method == http.MethodPost {
			body, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		if !bytes.Contains(body, []byte(`"tools/call"`)) {
			h.ServeHTTP(w, r)
			return
		}
		k := calls.Add(1)
		h.ServeHTTP(w, r)
		w.(http.Flusher).Flush()
		select { // the answer is written; the stream stays open
		case <-r.Context().Done():
			if k < n && calls.Load() == k {
				waited.Add(1) // ended before the next call came
			}
		case <-quit:
		}
	}))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(quit) })
	c, err := mcpadapter.NewClient(hs.URL, &mcpadapter.ClientOptions{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	for i := range n {
		echoOK(t, ctx, c, fmt.Sprint(i))
	}
	if w := waited.Load(); w > 1 {
		t.Errorf("%d of %d calls waited for the stream before them to be given up, want at most the first", w, n-1)
	}
}

// streamEnds is an http.RoundTripper that counts the responses to POSTs
// of the "linger" text whose body the client closed or read to its end.
type streamEnds struct{ n atomic.Int64 }

func (s *streamEnds) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		_ = req.Body.Close()
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil && bytes.Contains(body, []byte(`"linger"`)) {
		resp.Body = &endCounting{ReadCloser: resp.Body, n: &s.n}
	}
	return resp, err
}

// endCounting counts in n the first end of its body: closed, or read to
// its end (or to an error).
type endCounting struct {
	io.ReadCloser
	n    *atomic.Int64
	once sync.Once
}

func (b *endCounting) Read(p []byte) (int, error) {
	k, err := b.ReadCloser.Read(p)
	if err != nil {
		b.once.Do(func() { b.n.Add(1) })
	}
	return k, err
}

func (b *endCounting) Close() error {
	b.once.Do(func() { b.n.Add(1) })
	return b.ReadCloser.Close()
}

// A call whose context ends while it waits for the stream of the call
// before has sent nothing, so it tells the server of no cancellation: on
// go-sdk's path a request never written is never cancelled, and a
// notifications/cancelled for an id the server never saw is a message
// go-sdk would not send. The server keeps the first call's stream open
// until the test ends it, and records every cancellation it gets.
func TestHTTPFastPathCancelledWhileWaitingSendsNothing(t *testing.T) {
	t.Parallel()
	if !mcpadapter.FastPathBuilt {
		t.Skip("the fast path is not built (-tags mcpadapter_nofastpath): go-sdk's path does not wait for the stream before")
	}
	ctx := testCtx(t)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testserver.New(testserver.Options{Era: testserver.Legacy}) }, nil)
	release := make(chan struct{})
	var cancels atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Method == http.MethodPost {
			body, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		if bytes.Contains(body, []byte(`notifications/cancelled`)) {
			cancels.Add(1)
		}
		h.ServeHTTP(w, r)
		if bytes.Contains(body, []byte(`"held"`)) {
			w.(http.Flusher).Flush()
			select { // the answer is written; the stream stays open
			case <-release:
			case <-r.Context().Done():
			}
		}
	}))
	t.Cleanup(hs.Close)
	c, err := mcpadapter.NewClient(hs.URL, &mcpadapter.ClientOptions{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	echoOK(t, ctx, c, "first")
	echoOK(t, ctx, c, "held")
	// The next call waits for the held stream (for at most
	// wire.DrainGrace); its context ends first, or before it would send.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = c.CallTool(short, "echo", json.RawMessage(`{"text":"never sent"}`), nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call whose context ended while it waited: %v, want context.DeadlineExceeded", err)
	}
	close(release)
	echoOK(t, ctx, c, "after")
	// A cancellation is sent in the background: give one time to arrive.
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline) && cancels.Load() == 0; {
		time.Sleep(10 * time.Millisecond)
	}
	if n := cancels.Load(); n != 0 {
		t.Errorf("the server got %d notifications/cancelled for a call it never received", n)
	}
}

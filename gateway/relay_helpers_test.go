package gateway

//lint:file-ignore SA1019 logging lives in the handshake era, which these clients and servers speak too

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The helpers of the tests of a client that does not read its stream
// (the relays, the lane's attribution of log messages): the servers, the
// client that stops reading and the one that reads, and the waits.

// notifyBackends are the handshake-era notify servers these tests run
// against: a go-sdk server over stdio and over streamable HTTP.
func notifyBackends(t *testing.T) map[string]Server {
	bin := testserver.Build(t)
	return map[string]Server{
		"stdio": {Name: "up", Target: mcpadapter.Command{Path: bin, Args: []string{"-era", "legacy", "-notify"}}},
		"http": {Name: "up", Target: testserver.StartStreamable(t,
			testserver.New(testserver.Options{Era: testserver.Legacy, Notify: true})).URL},
	}
}

// stalledCalls is an http.RoundTripper whose tools/call answers are not
// read until open is closed: a client that does not read its stream.
type stalledCalls struct {
	open chan struct{}
	base http.RoundTripper // nil: http.DefaultTransport
}

func (s *stalledCalls) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := rereadBody(req)
	if err != nil {
		return nil, err
	}
	base := s.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil || !bytes.Contains(body, []byte(`"tools/call"`)) {
		return resp, err
	}
	resp.Body = &stalledBody{ReadCloser: resp.Body, open: s.open, ctx: req.Context()}
	return resp, nil
}

// rereadBody reads the body of req, which its transport then reads
// again, and returns it.
func rereadBody(req *http.Request) ([]byte, error) {
	if req.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, fmt.Errorf("read the body of %s %s: %w", req.Method, req.URL, err)
	}
	_ = req.Body.Close()
	req.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}

type stalledBody struct {
	io.ReadCloser
	open <-chan struct{}
	ctx  context.Context
}

func (b *stalledBody) Read(p []byte) (int, error) {
	select {
	case <-b.open:
	case <-b.ctx.Done():
		return 0, b.ctx.Err()
	}
	return b.ReadCloser.Read(p)
}

// floodedAlice is a client that does not read the stream of her call,
// whose server floods it with log messages.
type floodedAlice struct {
	name  string
	ctx   context.Context // hers, ended by leave
	cs    *mcp.ClientSession
	ss    *mcp.ServerSession // hers at the gateway
	stall *stalledCalls
	tr    *http.Transport
	done  chan error
	heard atomic.Int64 // the log messages she got whose data begins with her name
	all   atomic.Int64 // all the log messages she got
	// leave ends her call and her session, as a client that goes away
	// does.
	leave func()
}

// startFloodedAlice connects alice to the gateway g at url and makes her
// call send logs log messages of 256 KiB (more than the sockets between
// the gateway and her hold, and than her relay holds); it returns once
// her call has left the server's connection and her relay has dropped
// a message (it is full: her stream is not read).
func startFloodedAlice(t *testing.T, ctx context.Context, g *Gateway, url string, logs int) *floodedAlice {
	t.Helper()
	a := connectUnread(t, ctx, g, url, "alice")
	a.call(t, g, aliceLogs(logs))
	waitUntil(t, "alice's relay full", func() bool {
		g.relays.mu.Lock()
		defer g.relays.mu.Unlock()
		return g.relays.dropsSeen > 0
	})
	return a
}

// aliceLogs is the call of notify that sends logs log messages of 256
// KiB, "alice 0" ...: more than the sockets between the gateway and a
// client hold.
func aliceLogs(logs int) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "notify", Arguments: testserver.NotifyIn{Text: "alice", Log: true, Logs: logs, Pad: 256 << 10}}
}

// startFlooded connects a client named name to the gateway g at url that
// does not read the stream of its call, and makes the call send logs log
// messages of pad bytes; it returns once the call's relay has dropped a
// message (it is full), or the gateway reported one dropped.
func startFlooded(t *testing.T, ctx context.Context, g *Gateway, url string, d *dropReports, name string, logs, pad int) *floodedAlice {
	t.Helper()
	a := connectUnread(t, ctx, g, url, name)
	a.start(&mcp.CallToolParams{Name: "notify", Arguments: testserver.NotifyIn{Text: name, Log: true, Logs: logs, Pad: pad}})
	waitUntil(t, name+"'s relay full", func() bool {
		g.relays.mu.Lock()
		defer g.relays.mu.Unlock()
		r := g.relays.by[a.ss]
		return r != nil && r.droppedLogs > 0 || len(d.of(a.ss.ID())) > 0
	})
	return a
}

// connectUnread connects a client named name to the gateway g at url,
// at log level debug, whose calls' streams are not read until
// stall.open is closed; heard counts the log messages it gets whose data
// begins with name, all all of them.
func connectUnread(t *testing.T, ctx context.Context, g *Gateway, url, name string) *floodedAlice {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	a := &floodedAlice{name: name, ctx: ctx, tr: http.DefaultTransport.(*http.Transport).Clone(), done: make(chan error, 1)}
	a.stall = &stalledCalls{open: make(chan struct{}), base: a.tr}
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			a.all.Add(1)
			if strings.HasPrefix(fmt.Sprint(r.Params.Data), name) {
				a.heard.Add(1)
			}
		},
	})
	var err error
	a.cs, err = c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: a.stall}},
		&mcp.ClientSessionOptions{ProtocolVersion: v1125})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	for s := range g.server.Sessions() {
		if s.ID() == a.cs.ID() {
			a.ss = s
		}
	}
	if a.ss == nil {
		t.Fatalf("%s's session is not the gateway's", name)
	}
	a.leave = func() {
		cancel()
		_ = a.cs.Close()
		a.tr.CloseIdleConnections()
	}
	t.Cleanup(a.leave)
	return a
}

// start makes a's call p in a goroutine; its error goes to a.done.
func (a *floodedAlice) start(p *mcp.CallToolParams) {
	go func() {
		_, err := a.cs.CallTool(a.ctx, p)
		a.done <- err
	}()
}

// call makes a's call p (start) and waits until it is in flight at the
// gateway g's one server and has then left the server's connection: its
// answer came there while a does not read her stream.
func (a *floodedAlice) call(t *testing.T, g *Gateway, p *mcp.CallToolParams) {
	t.Helper()
	a.start(p)
	u := g.servers()[0]
	waitUntil(t, a.name+"'s call in flight", func() bool { return !u.lane.idle() })
	waitUntil(t, a.name+"'s call left the server's connection", u.lane.idle)
}

// waitHeard waits, for 10 seconds at the most, until count says want or
// more: the log messages a client got, which come after its call's answer
// when its relay held them.
func waitHeard(count func() int64, want int64) {
	for deadline := time.Now().Add(10 * time.Second); count() < want && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
}

// connectReader connects a client named name, which reads its streams,
// to url at log level debug, through rt (nil: http.DefaultTransport); it
// is closed when the test ends.
func connectReader(t *testing.T, ctx context.Context, url, name string, rt http.RoundTripper, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url}
	if rt != nil {
		tr.HTTPClient = &http.Client{Transport: rt}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, opts).Connect(ctx, tr,
		&mcp.ClientSessionOptions{ProtocolVersion: v1125})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	return cs
}

// countLogsOf returns a client's handler of log messages that counts in
// n those whose data begins with prefix.
func countLogsOf(prefix string, n *atomic.Int64) func(context.Context, *mcp.LoggingMessageRequest) {
	return func(_ context.Context, r *mcp.LoggingMessageRequest) {
		if strings.HasPrefix(fmt.Sprint(r.Params.Data), prefix) {
			n.Add(1)
		}
	}
}

// awaitCalls waits for the error of each call of done: one that is not
// nil fails the test (what names the call), and one that does not come
// before ctx ends stops it.
func awaitCalls(t *testing.T, ctx context.Context, what string, done ...<-chan error) {
	t.Helper()
	for _, d := range done {
		select {
		case err := <-d:
			if err != nil {
				t.Errorf("%s: %v", what, err)
			}
		case <-ctx.Done():
			t.Fatalf("%s did not return", what)
		}
	}
}

// relayCounts returns the relays of g: how many there are, their
// writers running and the bytes they hold together.
func relayCounts(g *Gateway) (relays, writers, total int) {
	g.relays.mu.Lock()
	defer g.relays.mu.Unlock()
	return len(g.relays.by), g.relays.writers, g.relays.total
}

// setRelayTotal sets the bound of all the relays of g together.
func setRelayTotal(g *Gateway, total int) {
	g.relays.mu.Lock()
	g.relays.maxTotal = total
	g.relays.mu.Unlock()
}

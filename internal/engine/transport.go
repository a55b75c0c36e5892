package engine

import (
	"cmp"
	"context"
	"fmt"
	"github.com/mcpadapter/mcpadapter/internal/order"
	"net/http"

	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/mcpadapter/mcpadapter/internal/streamable"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// transport builds the mcp.Transport for one connect attempt.
func (e *Engine) transport(ctx context.Context, kind Kind, s *Session) (mcp.Transport, func(), error) {
	switch kind {
	case Stdio:
		// The stdio connection reports to the observer itself; the
		// wrapper only hands calls their results as sent.
		t := e.cfg.Stdio
		t.Marks = s.order
		t.OnStart = func(conn *stdio.Conn) {
			s.stdio = conn
			conn.HoldNotices(s) // the fast path's notices: closing s waits for them
		}
		return &wire.ObservedTransport{Inner: &t}, nil, nil
	case InProcess:
		ct, st := mcp.NewInMemoryTransports()
		ss, err := e.cfg.Server.Connect(ctx, st, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("starting the in-process server: %w", err)
		}
		// The markers go outside the observer: the trace shows what the
		// server sent.
		observed := &wire.ObservedTransport{Inner: ct, Observer: s.slot.obs}
		return &order.Transport{Inner: observed, Marks: s.order}, func() { _ = ss.Close() }, nil
	case Streamable:
		hc := e.httpClient(false, s)
		oauth := e.oauth()
		s.fast.http = &streamable.Conn{Client: hc, URL: e.cfg.URL, OAuth: oauth, Limit: e.cfg.MaxMessageBytes, Log: e.cfg.Log}
		return &mcp.StreamableClientTransport{
			Endpoint:     e.cfg.URL,
			HTTPClient:   hc,
			OAuthHandler: oauth,
			MaxEventSize: sdkMaxEventSize(e.cfg.MaxMessageBytes),
		}, nil, nil
	case SSE:
		inner := &mcp.SSEClientTransport{Endpoint: e.cfg.URL, HTTPClient: e.httpClient(true, s),
			MaxEventSize: sdkMaxEventSize(e.cfg.MaxMessageBytes)}
		observed := &wire.ObservedTransport{Inner: &detachedTransport{inner: inner}, Observer: s.slot.obs}
		return &order.Transport{Inner: observed, Marks: s.order}, nil, nil
	}
	return nil, nil, fmt.Errorf("unknown transport %q", kind)
}

// oauth returns go-sdk's OAuth handler, or nil.
func (e *Engine) oauth() auth.OAuthHandler {
	if e.cfg.OAuth == nil {
		return nil
	}
	return e.cfg.OAuth()
}

// httpClient returns the HTTP client for one connection: the caller's
// client with the tap and the client's layers (Config.WrapHTTP) added
// around its transport. sse says the connection is the legacy SSE
// transport.
func (e *Engine) httpClient(sse bool, s *Session) *http.Client {
	hc := &http.Client{}
	if e.cfg.HTTPClient != nil {
		*hc = *e.cfg.HTTPClient
	}
	base := hc.Transport
	if base == nil {
		base = e.OwnTransport()
	}
	limit := e.cfg.MaxMessageBytes
	if !sse {
		// A go-sdk server's answer written too late on a POST's event
		// stream is read as an event, by go-sdk's transport and the fast
		// path alike.
		base = streamable.LateAnswers{Next: base, Limit: cmp.Or(max(limit, 0), stdio.DefaultMaxMessageBytes)}
	}
	tap := &wire.Tap{Base: streamable.Transport{Next: &firstAnswer{next: base, s: s}}, Observer: s.slot.obs, Observe: !sse, MaxMessageBytes: limit}
	if !sse {
		tap.Marks = s.order // over SSE the connection passes them up
	}
	tap.OnOversized = func(size int64, failedCall bool) {
		if failedCall {
			e.cfg.Log.Warn("a response was over the message size limit; its call failed", "bytes", size, "limit", limit)
		} else {
			e.cfg.Log.Warn("dropped a message over the message size limit", "bytes", size, "limit", limit)
		}
	}
	tap.OnStatus = func(method string, status int) {
		// A legacy SSE server answers the first POST of the streamable
		// transport with 404, 405 or 400.
		// (A 401 or 403 is the server asking for authorization first.)
		if method == http.MethodPost && status != 401 && status != 403 && !s.sawPOST.Swap(true) && (status == 400 || status == 404 || status == 405) {
			s.legacyHTTP.Store(true)
		}
	}
	var rt http.RoundTripper = tap
	if e.cfg.WrapHTTP != nil {
		rt = e.cfg.WrapHTTP(tap, sse)
	}
	hc.Transport = rt
	return hc
}

// sdkMaxEventSize is the cap on one server-sent event given to go-sdk,
// which fails the whole connection over it: the Tap replaces an event over
// the limit first, so go-sdk's cap is only a backstop above it.
func sdkMaxEventSize(limit int) int {
	return limit + 64<<10
}

// OwnTransport returns the HTTP transport the engine uses when the caller
// gave no HTTPClient. It is the engine's own, so Close can release its
// connections.
func (e *Engine) OwnTransport() *http.Transport {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.own == nil {
		e.own = http.DefaultTransport.(*http.Transport).Clone()
		// One server, many calls in flight: keep their connections (the
		// default keeps 2 per host, so every burst of parallel calls
		// would dial anew; TestHTTPConnectionsReusedConcurrent).
		e.own.MaxIdleConnsPerHost = maxIdleConnsPerServer
	}
	return e.own
}

// maxIdleConnsPerServer is how many idle keep-alive connections the
// client's own HTTP transport keeps to its server.
const maxIdleConnsPerServer = 64

// detachedTransport connects its inner transport with a context that lives
// as long as the connection: go-sdk's SSE client ties its event stream to
// the context given to Connect, which for us has a deadline.
type detachedTransport struct{ inner mcp.Transport }

func (t *detachedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	conn, err := t.inner.Connect(life)
	if !stop() {
		// ctx ended while connecting.
		if conn != nil {
			_ = conn.Close()
		}
		cancel()
		return nil, context.Cause(ctx)
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &cancelingConn{Connection: conn, cancel: cancel}, nil
}

type cancelingConn struct {
	mcp.Connection
	cancel context.CancelFunc
}

func (c *cancelingConn) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}

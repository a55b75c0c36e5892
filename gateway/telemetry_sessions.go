package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionClock holds the handshake-era sessions timed for
// mcpadapter.ServerSessionTelemetry until go-sdk closes them, and owns
// the goroutines that then wait for their connections' end to report it;
// Gateway.Close shuts it, closes the sessions and waits for them. The
// handler with sessions tells its event store when it closes a session
// (sessionClosed): nothing waits for an open session. A session without
// an id (stdio) is waited for from the start.
type sessionClock struct {
	mu     sync.Mutex
	closed bool
	timed  map[string]timedSession // by session id
	wg     sync.WaitGroup
}

// timedSession is a session being timed and what reports its end.
type timedSession struct {
	ss    *mcp.ServerSession
	ended func(error)
}

// watch calls ended with the error ss ended with, once it ends; it does
// nothing once the clock is shut.
func (c *sessionClock) watch(ss *mcp.ServerSession, ended func(error)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	id := ss.ID()
	if id == "" {
		c.wg.Go(func() { ended(ss.Wait()) })
		return
	}
	if old, ok := c.timed[id]; ok {
		// A copy of a shared session made again while the old one was
		// still timed: the old one is waited for from now on.
		c.wg.Go(func() { old.ended(old.ss.Wait()) })
	}
	if c.timed == nil {
		c.timed = make(map[string]timedSession)
	}
	c.timed[id] = timedSession{ss: ss, ended: ended}
}

// sessionClosed starts the report of the end of session id, which go-sdk
// has closed: once its connection's Wait returns, with the error it
// returns.
func (c *sessionClock) sessionClosed(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.timed[id]
	if !ok {
		return
	}
	delete(c.timed, id)
	c.wg.Go(func() { t.ended(t.ss.Wait()) })
}

// shut makes watch do nothing from now on.
func (c *sessionClock) shut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
}

// timeSession starts timing the session of req, an initialize request
// answered with res, when Options.Telemetry observes sessions
// (mcpadapter.ServerSessionTelemetry): its end is reported with the
// protocol version the gateway answered, op's transport and principal,
// and the error its connection broke with, if any (error type
// "transport": a message that is not JSON-RPC, a write that failed).
func (g *Gateway) timeSession(req mcp.Request, res mcp.Result, op mcpadapter.ServerOperation) {
	t, ok := g.opts.Telemetry.(mcpadapter.ServerSessionTelemetry)
	if !ok {
		return
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	if ss == nil {
		return
	}
	start := time.Now()
	end := mcpadapter.ServerSessionEnd{SessionID: ss.ID(), ProtocolVersion: initializedVersion(res), Transport: op.Transport, Principal: op.Principal}
	g.clock.watch(ss, func(err error) {
		end.Duration = time.Since(start)
		if !normalEnd(err) {
			end.Err, end.ErrorType = err, "transport"
		}
		// On a goroutine of the gateway's own (sessionClosed): a panic
		// is logged.
		g.recovered("Options.Telemetry, ending a session", func() { t.EndServerSession(context.Background(), end) })
	})
}

// initializedVersion returns the protocol version of an initialize
// result, when it is one the gateway knows.
func initializedVersion(res mcp.Result) string {
	var v string
	switch r := res.(type) {
	case *mcp.InitializeResult:
		v = r.ProtocolVersion
	case *rawResult: // withTasksCapability's
		var ir struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(r.raw, &ir) == nil {
			v = ir.ProtocolVersion
		}
	}
	if !knownVersion(v) {
		return ""
	}
	return v
}

// normalEnd reports whether a session ended with err ended normally: it
// was closed (by the client, for being idle, by the gateway) or its
// client closed the connection.
func normalEnd(err error) bool {
	return err == nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed)
}

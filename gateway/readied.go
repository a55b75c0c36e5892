package gateway

import (
	"context"
	"sync"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// readied makes ready, once per session, the sessions of a client of a
// handshake-era server (askLogs: the server is asked for every log
// message). A client has a session per connection: one, or over HTTP one
// per principal for a server whose credential is per principal
// (CallIdentity), each of which the server's log messages need asking
// for.
type readied struct {
	prepare func(ctx context.Context, cs *mcp.ClientSession)

	mu   sync.Mutex
	last map[string]*readiedConn // by connOf
}

// readiedConn is the session of one connection made ready last; mu is
// held while one is made ready, so that a request on it starts after.
type readiedConn struct {
	mu sync.Mutex
	cs *mcp.ClientSession
}

// maxReadied bounds the connections readied remembers: past it, it
// forgets them all (a session then made ready again asks the server
// once more).
const maxReadied = 4096

// ready makes ready the session of c that requests made with ctx use,
// connecting if needed, unless it was already; a session that cannot
// be had is left to the request to report.
func (r *readied) ready(ctx context.Context, c *mcpadapter.Client) {
	if r == nil || r.prepare == nil {
		return
	}
	cs, err := c.Session(ctx)
	if err != nil {
		return
	}
	r.mark(ctx, cs, true)
}

// mark records cs, the session of the connection of ctx, as made ready,
// making it ready first when prepare is set and it was not.
func (r *readied) mark(ctx context.Context, cs *mcp.ClientSession, prepare bool) {
	key := connOf(ctx)
	r.mu.Lock()
	rc := r.last[key]
	if rc == nil {
		if r.last == nil || len(r.last) >= maxReadied {
			r.last = make(map[string]*readiedConn)
		}
		rc = &readiedConn{}
		r.last[key] = rc
	}
	r.mu.Unlock()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.cs == cs {
		return
	}
	rc.cs = cs
	if prepare {
		r.prepare(ctx, cs)
	}
}

package wire

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ObservedTransport reports every message of an mcp.Transport's
// connections to an Observer. It must not wrap go-sdk's streamable HTTP
// transport, whose connection has hidden methods go-sdk relies on; HTTP is
// observed by a Tap instead.
type ObservedTransport struct {
	Inner    mcp.Transport // the transport observed
	Observer *Observer     // sees every message; nil sees none
}

// Connect connects the inner transport and observes the connection.
func (t *ObservedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &observedConn{Connection: c, obs: t.Observer}, nil
}

type observedConn struct {
	mcp.Connection
	obs *Observer
}

func (c *observedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err == nil {
		c.obs.Received(m, nil)
	}
	return m, err
}

// Write sends m. A failed write is not marked as undelivered: over SSE the
// POST may fail after the server took the message (a proxy's 502), and a
// request must not run twice; the HTTP tap marks the failures that are
// certain.
func (c *observedConn) Write(ctx context.Context, m jsonrpc.Message) error {
	c.obs.Sent(m, nil)
	return c.Connection.Write(ctx, m)
}

package order

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport passes up Marks' markers on the connections of an
// mcp.Transport whose Read returns the server's messages in the order it
// sent them (go-sdk's in-memory and SSE transports). It must not wrap
// go-sdk's streamable HTTP transport, whose connection has hidden methods
// go-sdk relies on.
type Transport struct {
	Inner mcp.Transport
	Marks *Marks
}

// Connect connects the inner transport.
func (t *Transport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.Marks.InOrder()
	return &Conn{Connection: c, marks: t.Marks}, nil
}

// Conn is a connection that passes up a marker before a response that
// follows a request or notification read since the last marker.
type Conn struct {
	mcp.Connection
	marks *Marks

	// Read's goroutine only (go-sdk reads from one).
	held  jsonrpc.Message // a response passed up after its marker
	since bool            // a message from the server was read since the last marker
}

// Read returns the next message, or a marker before it.
func (c *Conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if m := c.held; m != nil {
		c.held = nil
		return m, nil
	}
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		return nil, err
	}
	switch msg.(type) {
	case *jsonrpc.Request:
		c.since = true
		if marker := c.marks.Boundary(); marker != nil {
			// A request of the client's was sent since the message
			// before msg was read: msg comes after a marker of its own.
			c.held = msg
			return marker, nil
		}
	case *jsonrpc.Response:
		if c.since && c.marks != nil {
			c.since = false
			c.held = msg
			return c.marks.Issue(), nil
		}
	}
	return msg, nil
}

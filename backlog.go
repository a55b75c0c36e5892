package mcpadapter

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// backlogMiddleware tells the stdio connection of a session each message
// that reaches its handler, so that it holds back a server that floods the
// client (see internal/stdio). (Those of a session still in its handshake
// are not counted: the connection's wait that gives up covers them.)
func (c *Client) backlogMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if cs, ok := req.GetSession().(*mcp.ClientSession); ok {
			if s := c.sessionOf(cs); s != nil && s.stdio != nil {
				s.stdio.MessageHandled()
			}
		}
		return next(ctx, method, req)
	}
}

// sessionOf finds the live or retiring session of cs.
func (c *Client) sessionOf(cs *mcp.ClientSession) *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur != nil && c.cur.cs == cs {
		return c.cur
	}
	for _, s := range c.retiring {
		if s.cs == cs {
			return s
		}
	}
	return nil
}

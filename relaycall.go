package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/mcpadapter/mcpadapter/internal/plaincall"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RelayCall makes the tools/call another client wrote, for a program that
// relays the server to other clients (a gateway; see ClientOptions.Relay),
// and returns the server's result as go-sdk decodes it: an error result, an
// input_required result, and a JSON-RPC error of the server's come back
// as the server sent them, for the program to pass on. params name the
// tool as the server knows it and carry the arguments it receives (a
// json.RawMessage is sent as it is; empty or null means {}), the
// request's _meta, and a 2026-07-28 retry's InputResponses and
// RequestState. params is not changed.
//
// The call is made as CallTool makes one: bounded by the client's time
// limits (ClientOptions.Timeout, ResetTimeoutOnProgress, MaxTotalTimeout,
// or a config entry's), once one of the ClientOptions.MaxConcurrentCalls
// slots is free, sent again only when it certainly never reached the
// server, on a new connection when the server lost the last one, and on
// the connection's fast path when nothing but a name and arguments travel
// with it. From opts it takes Timeout, ResetTimeoutOnProgress,
// MaxTotalTimeout and Progress; the other fields are ignored (Meta: the
// _meta is params'). Tool.RelayCall adds the tool's own timeout.
//
// The entries of the call's CallIdentity.Meta win over params' _meta of
// the same name.
//
// The progress token in params belongs to the other client and is not
// sent: the server is given a token of the client's own when opts.Progress
// is set (which receives the call's progress notifications) or when a
// timeout that restarts on progress needs one; a call with neither takes
// no token, and so keeps to the fast path, also when
// ClientOptions.ProgressHandler is set.
//
// A failure to reach the server is a *TransportError, whose Err is a
// *TimeoutError when a time limit ended the call.
func (c *Client) RelayCall(ctx context.Context, params *mcp.CallToolParams, opts *CallOptions) (*mcp.CallToolResult, error) {
	if params == nil || params.Name == "" {
		return nil, errors.New("mcpadapter: RelayCall: params must name a tool")
	}
	if err := CallIdentityFrom(ctx).check(); err != nil {
		return nil, err
	}
	p := *params
	args, err := plaincall.RelayArguments(p.Arguments)
	if err != nil {
		return nil, fmt.Errorf("mcpadapter: RelayCall of %q: %w", p.Name, err)
	}
	p.Arguments = args
	tc := &toolCall{tool: p.Name, modelName: p.Name, args: args, relay: true}
	if opts != nil {
		tc.progress = opts.Progress
		tc.timeouts, tc.resetOnProgress = opts.timeouts(), opts.ResetTimeoutOnProgress
	}
	var own map[string]any
	if id := CallIdentityFrom(ctx); id != nil {
		own = id.Meta
	}
	p.Meta = plaincall.RelayMeta(p.Meta, own)
	return observed(ctx, c, p.Name, &p.Meta, func(ctx context.Context) (*mcp.CallToolResult, error) { return c.relay(ctx, tc, &p) },
		func(r *mcp.CallToolResult) bool { return r.IsError })
}

// relay sends the relayed call params. Their _meta is the call's own
// (RelayMeta's copy), which go-sdk may write its entries into: sendHeld
// copies no CallOptions.Meta over it (tc.meta is unset).
func (c *Client) relay(ctx context.Context, tc *toolCall, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	reply, err := c.sendCall(ctx, tc, params, c.opts.Timeout)
	if err != nil {
		return nil, err
	}
	if len(reply.Unknown) > 0 {
		i := slices.Min(slices.Collect(maps.Keys(reply.Unknown)))
		return nil, &ContentError{Server: c.name, Tool: tc.tool, Index: i, Err: fmt.Errorf("content of type %q, which go-sdk does not decode, cannot be relayed", reply.Unknown[i].Type)}
	}
	return reply.CallToolResult, nil
}

// RelayCall is Client.RelayCall bounded also by the tool's own timeout
// (ToolTransform.Timeout, a config entry's tools.<name>.timeout) unless
// opts.Timeout is set. params must name the tool as its server knows it
// (OriginalName), with the arguments the server receives
// (ServerArguments). It fails for the tool-search pair, which is answered
// in this process.
func (t *Tool) RelayCall(ctx context.Context, params *mcp.CallToolParams, opts *CallOptions) (*mcp.CallToolResult, error) {
	return t.RelayCallVia(ctx, nil, params, opts)
}

// RelayCallVia is RelayCall sent through c, another Client of the tool's
// server made with the same settings (a second connection to it); a nil
// c is the tool's own Client. The tool's own timeout applies as with
// RelayCall; c's settings bound the call otherwise.
func (t *Tool) RelayCallVia(ctx context.Context, c *Client, params *mcp.CallToolParams, opts *CallOptions) (*mcp.CallToolResult, error) {
	if t.local != nil || t.client == nil {
		return nil, fmt.Errorf("mcpadapter: tool %q is answered in this process and has no server to relay a call to", t.Name)
	}
	if params == nil || params.Name != t.OriginalName {
		return nil, fmt.Errorf("mcpadapter: RelayCall of tool %q must name it as its server does, %q", t.Name, t.OriginalName)
	}
	if t.timeout > 0 {
		o := CallOptions{}
		if opts != nil {
			o = *opts
		}
		o.toolTimeout = t.timeout
		opts = &o
	}
	if c == nil {
		c = t.client
	}
	return c.RelayCall(ctx, params, opts)
}

package mcpadapter

import (
	"context"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/searchpair"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolListChangedHandler returns the handler go-sdk gets for
// notifications/tools/list_changed: it counts the change (toolsGen), then
// runs ClientOptions.ToolListChangedHandler. It is nil unless
// ClientOptions.WatchTools or ToolListChangedHandler is set, because a
// handler makes go-sdk open a subscriptions/listen stream on 2026-07-28
// connections.
func (c *Client) toolListChangedHandler() func(context.Context, *mcp.ToolListChangedRequest) {
	user := c.opts.ToolListChangedHandler
	if !c.opts.WatchTools && user == nil {
		return nil
	}
	return func(ctx context.Context, req *mcp.ToolListChangedRequest) {
		c.toolsGen.Add(1)
		c.log.Debug("the server's tool list changed")
		if user != nil {
			user(ctx, req)
		}
	}
}

// ToolsVersion counts the tool-list changes the adapter's servers have
// announced (notifications/tools/list_changed, or the 2026-07-28
// subscription) since they were first connected: when it differs from
// the last value seen, call Tools again for the current list. It stays
// zero for servers that are not watched (Options.WatchTools,
// ClientOptions.WatchTools).
func (a *Adapter) ToolsVersion() uint64 {
	var n uint64
	for _, c := range a.group.clients {
		n += c.toolsGen.Load()
	}
	return n
}

// ifRemoved replaces the error result of a call to a tool its server no
// longer lists (it refused the call as unknown, or announced a change of
// its list since the tool was listed) with one that says so and names the
// tools the server has now. Any other result passes unchanged, as does
// the original when the server cannot be listed.
func (t *Tool) ifRemoved(ctx context.Context, res *Result, err error) (*Result, error) {
	if err != nil || res == nil || !res.IsError || t.client == nil {
		return res, err
	}
	if t.listedGen == t.client.toolsGen.Load() && !refusedAsUnknown(res, t.OriginalName) {
		return res, err
	}
	listed, lerr := t.client.ListTools(ctx)
	if lerr != nil {
		return res, err
	}
	names := make([]string, 0, len(listed))
	for _, lt := range listed {
		if lt.Name == t.OriginalName {
			return res, err
		}
		names = append(names, lt.Name)
	}
	prefix := ""
	if t.Name != t.OriginalName && strings.HasSuffix(t.Name, "_"+t.OriginalName) {
		prefix = strings.TrimSuffix(t.Name, t.OriginalName)
	}
	return errorResult(searchpair.RemovedText(t.Name, t.Server, prefix, names)), nil
}

// refusedAsUnknown reports whether an error result is a server's refusal
// of the tool named name as one it does not know: go-sdk and FastMCP say
// "unknown tool", the TypeScript SDK "Tool NAME not found". (A tool's own
// "file not found" does not name the tool, so it costs no listing.)
func refusedAsUnknown(res *Result, name string) bool {
	text := strings.ToLower(res.Text())
	return strings.Contains(text, "unknown tool") ||
		strings.Contains(text, "tool "+strings.ToLower(name)+" not found") ||
		strings.Contains(text, "tool \""+strings.ToLower(name)+"\" not found")
}

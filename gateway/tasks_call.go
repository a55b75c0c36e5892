package gateway

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"maps"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/taskwire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskMetaKey is where ServeHTTP puts the "task" member of a 2025-11-25
// tools/call (go-sdk drops params it does not know).
const taskMetaKey = "io.mcpadapter.gateway/task"

// coreAsk reports whether a tools/call's _meta carries a 2025-11-25
// client's request for a task, and the ttl it asked for.
func coreAsk(meta mcp.Meta) (asked bool, ttl time.Duration) {
	// Only an object asks, as only an object in the "task" member is
	// lifted here: a client may write the key itself.
	m, ok := meta[taskMetaKey].(map[string]any)
	if !ok {
		return false, 0
	}
	if f, ok := m["ttl"].(float64); ok && f > 0 && f < float64(365*24*time.Hour/time.Millisecond) {
		ttl = time.Duration(f) * time.Millisecond
	}
	return true, ttl
}

// declaresTasks reports whether req comes from a 2026-07-28 client that
// declares the Tasks extension.
func declaresTasks(ctx context.Context, req mcp.Request) bool {
	if !isModern(req) {
		return false
	}
	c := clientCaps(ctx, req)
	return c != nil && c.Extensions[taskwire.Extension] != nil
}

// hasTasks reports whether u runs calls of t as tasks of its own: a
// 2026-07-28 server that declares the Tasks extension, or a tool of a
// handshake-era server whose taskSupport asks for one.
func (u *upstream) hasTasks(t *mcpadapter.Tool, required bool) bool {
	u.mu.Lock()
	modern, caps := u.modern, u.caps
	u.mu.Unlock()
	if modern {
		return caps != nil && caps.Extensions[taskwire.Extension] != nil
	}
	return t.TaskSupport == "required" || !required && t.TaskSupport == "optional"
}

// taskCall answers a tools/call that is, or may become, a task: the
// client asked for one (the "task" member, which 2025-11-25 defines; a
// 2026-07-28 client may send it too, and gets the extension's form), or
// declares the extension and the server has Tasks (the server decides),
// or the server has Tasks and the client knows none (the call then waits
// for the task's result). ok is false for every other call.
func (g *Gateway) taskCall(ctx context.Context, req mcp.Request) (_ mcp.Result, _ error, ok bool) {
	p, isCall := req.GetParams().(*mcp.CallToolParamsRaw)
	if !isCall || p == nil || g.search.handles(p.Name) {
		return nil, nil, false
	}
	asked, ttl := coreAsk(p.Meta)
	ext := isModern(req) // answered in the extension's form
	declared := ext && declaresTasks(ctx, req)
	r, found := g.cat.tool(p.Name)
	if !found || !g.allowed(ctx, r.u.name, "tool", r.tool.OriginalName) {
		return nil, nil, false
	}
	if !asked && !r.u.hasTasks(r.tool, !declared) {
		return nil, nil, false
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	audit := g.audit(ctx, p.Name, ss, p.Arguments)
	audit.found(r.u.name, r.tool.OriginalName)
	if err := checkArgs(p.Arguments); err != nil {
		audit.end(ctx, nil, err)
		return nil, err, true
	}
	if g.draining.Load() {
		audit.end(ctx, nil, errShuttingDown())
		return nil, errShuttingDown(), true
	}
	if !asked && !declared {
		res, err := g.waitTaskCall(ctx, req, r, p.Arguments)
		audit.end(ctx, res, err)
		return res, err, true
	}
	t, err := g.tasks.start(ctx, PrincipalFrom(ctx), ss, r, p.Arguments, ext, ttl, audit, newOrigin(ctx, req).canAskURL())
	if err != nil {
		audit.end(ctx, nil, err)
		return nil, err, true
	}
	if !asked {
		// The server decides: a task of its own, or the result at once.
		select {
		case <-t.made:
		case <-t.done:
			t.mu.Lock()
			plain := t.remote == ""
			t.mu.Unlock()
			if plain {
				g.tasks.forget(ctx, t)
				_, _, _, res, rerr, _, _ := t.snapshot()
				if rerr != nil {
					return nil, rerr, true
				}
				return res, nil, true
			}
		case <-ctx.Done():
			_ = g.tasks.cancelTask(ctx, t)
			g.tasks.forget(ctx, t)
			return nil, context.Cause(ctx), true
		}
	}
	return g.taskResult(t, true), nil, true
}

// waitTaskCall makes the call of a client that knows no tasks to a server
// that makes one, and returns the task's result: the server's questions
// go to the client as they would in a plain call.
func (g *Gateway) waitTaskCall(ctx context.Context, req mcp.Request, r toolRoute, args json.RawMessage) (*mcp.CallToolResult, error) {
	ss, _ := req.GetSession().(*mcp.ServerSession)
	release, err := g.admit(ss, true)
	if err != nil {
		return nil, err
	}
	defer release()
	o := newOrigin(ctx, req)
	for round := 1; ; round++ {
		res, err := g.runTaskCall(context.WithValue(ctx, syncOriginKey{}, o), r, args, mcpadapter.TaskAuto, nil)
		g.relays.flush(ctx, o) // the call's log messages reach the client before its answer
		var sn *signInNeeded
		if !errors.As(err, &sn) {
			return res, err
		}
		if round > maxSignInRounds || !g.canAskSignInMidCall(o) {
			return g.signInAnswer(o, r.u, sn.sr, false)
		}
		res, err = g.signInMidCall(ctx, o, r.u, sn.sr)
		if askedNot(err) {
			return g.signInAnswer(o, r.u, sn.sr, false)
		}
		if res != nil || err != nil {
			return res, err
		}
	}
}

// runTaskCall calls r with args (as the client wrote them) through the
// server's client, which makes and follows the server's task when mode
// and the server say so (onTask is told its id).
func (g *Gateway) runTaskCall(ctx context.Context, r toolRoute, args json.RawMessage, mode mcpadapter.TaskMode, onTask func(mcpadapter.TaskHandle)) (*mcp.CallToolResult, error) {
	u := r.u
	if up, _, err := u.status(); !up {
		return nil, &unavailableError{server: u.name, err: err}
	}
	o, _ := ctx.Value(syncOriginKey{}).(*origin)
	if o == nil {
		o = &origin{key: "t:" + newKey(), ctx: ctx} // asks no one
	}
	unlimit, err := g.quota.admit(ctx, PrincipalFrom(ctx), u.name, r.tool.OriginalName)
	if err != nil {
		return nil, err
	}
	defer unlimit()
	if ctx, err = u.as(ctx); err != nil {
		return nil, err
	}
	if !u.isModern() {
		// Keeps the server's requests attributable (lane.go).
		f := newFlight(ctx, o)
		if err := u.lane.enter(ctx, f); err != nil {
			return nil, err
		}
		defer u.lane.leave(f)
		// One of the server's call slots: its other connections'
		// calls (pool.go) count against the same cap.
		free, err := u.callSlot(ctx)
		if err != nil {
			return nil, err
		}
		defer free()
	}
	opts := &mcpadapter.CallOptions{Task: mode}
	if t := g.opts.Telemetry; t != nil {
		opts.Meta = make(map[string]any, 2)
		t.InjectMeta(ctx, opts.Meta)
	}
	if onTask != nil {
		opts.OnTask = onTask
	}
	if t := taskFrom(ctx); t != nil && t.detach != nil {
		opts.Detach = t.detach // another replica adopted the task (letGo)
	}
	if args == nil {
		args = json.RawMessage("{}")
	}
	// Not sent to a server removed (or closed) while the call waited for
	// its turn; the client is closed again after a call that raced that.
	if err := u.gone(); err != nil {
		return nil, rpcError(err)
	}
	defer u.closeAgain()
	if !u.isModern() {
		u.ready.ready(ctx, u.client) // its connection is asked for log messages
	}
	res, err := u.client.CallTool(ctx, r.tool.OriginalName, json.RawMessage(r.tool.ServerArguments(args)), opts)
	if sr := signInOf(err); sr != nil && u.web != nil {
		return nil, &signInNeeded{sr} // the caller asks
	}
	if err != nil {
		var tc *mcpadapter.TaskCancelledError
		if errors.As(err, &tc) {
			return nil, err
		}
		return nil, rpcError(u.wrapErr(err))
	}
	return callResult(res), nil
}

// callResult turns the client's result back into the tools/call result
// the server sent, without the server's name for itself (dropServerInfo):
// the gateway names itself.
func callResult(r *mcpadapter.Result) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: r.IsError, Content: []mcp.Content{}}
	out.Meta = r.Meta
	if _, named := r.Meta[mcp.MetaKeyServerInfo]; named {
		out.Meta = maps.Clone(r.Meta) // r's own is left as it is
		delete(out.Meta, mcp.MetaKeyServerInfo)
	}
	if r.Artifact != nil && len(r.Artifact.StructuredContent) > 0 {
		out.StructuredContent = r.Artifact.StructuredContent
	}
	for _, c := range r.Content {
		switch c := c.(type) {
		case *mcpadapter.TextContent:
			out.Content = append(out.Content, &mcp.TextContent{Text: c.Text, Annotations: c.Annotations, Meta: c.Meta})
		case *mcpadapter.ImageContent:
			out.Content = append(out.Content, &mcp.ImageContent{Data: c.Data, MIMEType: c.MIMEType, Annotations: c.Annotations, Meta: c.Meta})
		case *mcpadapter.AudioContent:
			out.Content = append(out.Content, &mcp.AudioContent{Data: c.Data, MIMEType: c.MIMEType, Annotations: c.Annotations, Meta: c.Meta})
		case *mcpadapter.ResourceLinkContent:
			out.Content = append(out.Content, &mcp.ResourceLink{URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description, MIMEType: c.MIMEType, Size: c.Size, Icons: c.Icons, Annotations: c.Annotations, Meta: c.Meta})
		case *mcpadapter.EmbeddedResourceContent:
			rc := &mcp.ResourceContents{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text, Blob: c.Blob, Meta: c.ResourceMeta}
			out.Content = append(out.Content, &mcp.EmbeddedResource{Resource: rc, Annotations: c.Annotations, Meta: c.Meta})
		case *mcpadapter.UnknownContent:
			out.Content = append(out.Content, &mcp.TextContent{Text: "[content of type " + c.Type + ": " + base64.StdEncoding.EncodeToString(c.Raw) + "]"})
		}
	}
	return out
}

// rawResult is a result written as given.
type rawResult struct {
	mcp.ResultBase
	raw json.RawMessage
}

func (r *rawResult) MarshalJSON() ([]byte, error) { return r.raw, nil }

// taskResult returns t as a result: for the tools/call that made it
// (created) or for tasks/get, in the form of the client's era.
func (g *Gateway) taskResult(t *gwTask, created bool) mcp.Result {
	v := g.tasks.view(t, t.ext, created)
	if !t.ext && created {
		return marshalResult(map[string]any{"task": v})
	}
	return marshalResult(v)
}

func marshalResult(v any) mcp.Result {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"error": &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}})
	}
	return &rawResult{raw: b}
}

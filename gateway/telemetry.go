package gateway

import (
	"context"
	"net/http"
	"reflect"
	"strings"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxTelemetryURI bounds the resource URI a ServerOperation carries.
const maxTelemetryURI = 1 << 10

// knownVersion reports whether a ServerOperation names protocol version
// v: a 2026-07-28 request's version is the client's own text (its _meta),
// and one the gateway does not know is left out rather than made a new
// value of a metric.
func knownVersion(v string) bool {
	switch v {
	case "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", modernVersion:
		return true
	}
	return false
}

// observe wraps handle so that each client request is an operation of
// Options.Telemetry: it starts with the client's trace context, the
// request is handled with the context it returns (so the requests to the
// servers behind are made with it), and it ends with the answer.
// Notifications are not observed.
func (g *Gateway) observe(handle mcp.MethodHandler) mcp.MethodHandler {
	t := g.opts.Telemetry
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") || g.replaying(req) {
			return handle(ctx, method, req)
		}
		op := g.operation(method, req)
		if op.Header != nil {
			if v, ok := g.httpCtx.Load(headerKey(op.Header)); ok {
				hr := v.(*httpRequest)
				op.HTTPContext, op.RemoteAddr = hr.ctx, hr.remote
				if hr.body != nil {
					op.RequestID = hr.body.requestID(method)
				}
			}
		} else if ex := req.GetExtra(); ex != nil {
			op.RequestID = g.stdioIDs.take(ex)
		}
		ctx, end := t.StartServerOperation(ctx, op)
		res, err := handle(ctx, method, req)
		toolErr := false
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil && err == nil {
			toolErr = r.IsError
		}
		end(mcpadapter.NewServerOperationResult(err, toolErr))
		if method == "initialize" && err == nil {
			g.timeSession(req, res, op)
		}
		return res, err
	}
}

// operation describes a client's request for Options.Telemetry. The names
// in it are those the gateway knows: a tool, prompt or task server a
// client made up is left out.
func (g *Gateway) operation(method string, req mcp.Request) mcpadapter.ServerOperation {
	op := mcpadapter.ServerOperation{Method: method, Transport: "stdio"}
	if ex := req.GetExtra(); ex != nil {
		if ex.Header != nil {
			op.Header, op.Transport = ex.Header, "streamable-http"
		}
		if ex.TokenInfo != nil {
			op.Principal = ex.TokenInfo.UserID
		}
	}
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
		op.SessionID = ss.ID()
	}
	if r, ok := req.(interface{ ProtocolVersion() string }); ok && knownVersion(r.ProtocolVersion()) {
		op.ProtocolVersion = r.ProtocolVersion()
	}
	p := req.GetParams()
	if p == nil {
		return op
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return op
	}
	op.Meta = p.GetMeta()
	switch p := p.(type) {
	case *mcp.CallToolParamsRaw:
		if g.search.handles(p.Name) {
			op.Tool = p.Name
		} else if r, ok := g.cat.tool(p.Name); ok {
			op.Tool, op.Server = p.Name, r.u.name
		}
	case *mcp.GetPromptParams:
		if r, ok := g.cat.prompt(p.Name); ok {
			op.Prompt, op.Server = p.Name, r.u.name
		}
	case *mcp.ReadResourceParams:
		op.ResourceURI = cutURI(p.URI)
		if u := g.cat.resourceOwner(p.URI); u != nil {
			op.Server = u.name
		}
	case *mcp.SubscribeParams:
		op.ResourceURI = cutURI(p.URI)
	case *mcp.UnsubscribeParams:
		op.ResourceURI = cutURI(p.URI)
	case *taskParams:
		if s, ok := parseTaskID(p.TaskID); ok && g.upstream(s) != nil {
			op.Server = s
		}
	}
	return op
}

// headerKey identifies the HTTP request whose header is h while it is
// handled: go-sdk hands a request's handlers the header of the HTTP
// request that carried it, the map itself.
func headerKey(h http.Header) uintptr {
	return reflect.ValueOf(h).Pointer()
}

// cutURI cuts a client's resource URI at maxTelemetryURI bytes, and
// leaves out what is not UTF-8 (the cut may split a character).
func cutURI(uri string) string {
	if len(uri) > maxTelemetryURI {
		uri = uri[:maxTelemetryURI]
	}
	return strings.ToValidUTF8(uri, "")
}

// taskRun returns, with Options.Telemetry, what starts the operation of
// the run of a task the gateway makes for the request of ctx (for
// principal, in session ss, calling r): an operation "tasks/run" whose
// trace context is the request's, so that the call to the server, made
// after the request has its answer, is in the client's trace. It returns
// nil without Telemetry.
func (g *Gateway) taskRun(ctx context.Context, principal string, ss *mcp.ServerSession, r toolRoute) func(context.Context) (context.Context, func(mcpadapter.ServerOperationResult)) {
	t := g.opts.Telemetry
	if t == nil {
		return nil
	}
	meta := make(map[string]any, 2)
	t.InjectMeta(ctx, meta)
	op := mcpadapter.ServerOperation{Method: "tasks/run", Server: r.u.name, Tool: r.tool.Name, Principal: principal, Meta: meta}
	if ss != nil {
		op.SessionID = ss.ID()
	}
	return func(ctx context.Context) (context.Context, func(mcpadapter.ServerOperationResult)) {
		return t.StartServerOperation(ctx, op)
	}
}

// redactedTelemetry is Options.Client.Telemetry as the servers' clients
// use it: the secrets of the config are blanked out of what it sees, an
// operation's URL (a token in its query, a password) and the error it
// ends with (which a server may make quote the credential it was sent),
// as they are out of the gateway's logs.
type redactedTelemetry struct {
	t   mcpadapter.Telemetry
	red *redactor
}

func (r redactedTelemetry) StartOperation(ctx context.Context, op mcpadapter.Operation) (context.Context, func(mcpadapter.OperationResult)) {
	if r.red.r.Load() == nil {
		return r.t.StartOperation(ctx, op) // no secrets
	}
	op.URL = r.red.string(op.URL)
	ctx, end := r.t.StartOperation(ctx, op)
	return ctx, func(res mcpadapter.OperationResult) {
		res.Err = r.red.err(res.Err)
		end(res)
	}
}

func (r redactedTelemetry) InjectMeta(ctx context.Context, meta map[string]any) {
	r.t.InjectMeta(ctx, meta)
}

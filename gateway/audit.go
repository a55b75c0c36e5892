package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxAuditPayload bounds the arguments and the result an audit record
// holds (Options.AuditPayload); longer ones are cut and marked.
const maxAuditPayload = 64 << 10

// auditCall is one tool call on its way, for Options.AuditLog.
type auditCall struct {
	g         *Gateway
	start     time.Time
	principal string
	session   string
	name      string // the tool as the client named it
	server    string // "" until the tool is found
	tool      string // the server's name for it
	args      json.RawMessage
}

// audit starts the record of a tool call of the tool clients know as
// name; its end method writes it. It returns nil without an audit log.
func (g *Gateway) audit(ctx context.Context, name string, ss *mcp.ServerSession, args json.RawMessage) *auditCall {
	if g.opts.AuditLog == nil {
		return nil
	}
	a := &auditCall{g: g, start: time.Now(), principal: PrincipalFrom(ctx), name: name, args: args}
	if ss != nil {
		a.session = ss.ID()
	}
	return a
}

// found records the server and the server's name of the tool.
func (a *auditCall) found(server, tool string) {
	if a != nil {
		a.server, a.tool = server, tool
	}
}

// end writes the record of the call: its outcome ("ok", "tool_error",
// "input_required", "refused" for a tool the principal may not use or
// that is not known, "error"), its duration, the JSON-RPC error's code
// and message, and with Options.AuditPayload the arguments and result.
// Every string goes through the redactor, the payloads and the error
// through the trace's redaction first.
func (a *auditCall) end(ctx context.Context, res *mcp.CallToolResult, err error) {
	if a == nil {
		return
	}
	outcome := "ok"
	attrs := []slog.Attr{}
	switch {
	case err != nil:
		outcome = "error"
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			attrs = append(attrs, slog.Int64("code", we.Code))
			if we.Code == jsonrpc.CodeInvalidParams && a.server == "" {
				outcome = "refused"
			}
		}
		attrs = append(attrs, slog.String("error", a.g.red.string(wire.RedactURLSecrets(err.Error()))))
	case res != nil && asksRound(res):
		outcome = "input_required"
	case res != nil && res.IsError:
		outcome = "tool_error"
	}
	attrs = append(attrs,
		slog.String("principal", a.principal),
		slog.String("session", a.session),
		slog.String("tool", a.name),
		slog.String("server", a.server),
		slog.String("server_tool", a.tool),
		slog.String("outcome", outcome),
		slog.Float64("duration_ms", float64(time.Since(a.start).Microseconds())/1000),
	)
	if p := a.g.opts.AuditPayload; p != nil && a.server != "" && p(a.principal, a.server, a.tool) {
		// Blanked out before the cut, which could split a secret.
		attrs = append(attrs, slog.String("arguments", cut(a.g.red.string(auditPayload(a.args)))))
		if res != nil {
			if b, err := json.Marshal(res); err == nil {
				attrs = append(attrs, slog.String("result", cut(a.g.red.string(auditPayload(b)))))
			}
		}
	}
	a.g.opts.AuditLog.LogAttrs(context.WithoutCancel(ctx), slog.LevelInfo, "tool call", attrs...)
}

// auditPayload returns a call's arguments or result as the audit log
// records them: redacted as the protocol trace is (wire.RedactJSON:
// secret-named members, bearer tokens, secret parameters, headers and
// JWTs in strings), or, if it is not JSON, as error text is.
func auditPayload(raw []byte) string {
	if !json.Valid(raw) {
		return wire.RedactURLSecrets(string(raw))
	}
	return wire.RedactJSON(raw)
}

// cut returns s cut at maxAuditPayload bytes, marked when cut.
func cut(s string) string {
	if len(s) <= maxAuditPayload {
		return s
	}
	return s[:maxAuditPayload] + "…[cut]"
}

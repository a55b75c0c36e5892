package ui

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
)

// Recorder receives the clients' logs, the protocol trace among them,
// for the page's timeline. Give Logger to the clients
// (mcpadapter.ClientOptions.Logger, with Trace set) before they connect,
// and the Recorder to New.
type Recorder struct {
	log *eventLog
}

// NewRecorder returns a Recorder keeping the latest 20,000 events.
func NewRecorder() *Recorder {
	return &Recorder{log: newEventLog(20000)}
}

// Logger returns the logger to give the clients: it records each
// JSON-RPC message they log (already redacted) and their log lines at
// level Info and above; other debug lines are dropped.
func (r *Recorder) Logger() *slog.Logger {
	return slog.New(&traceHandler{log: r.log})
}

// traceHandler is the slog.Handler behind Recorder.Logger.
type traceHandler struct {
	log   *eventLog
	attrs []slog.Attr
}

func (h *traceHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *traceHandler) Handle(_ context.Context, r slog.Record) error {
	var server, message string
	var rest []string
	collect := func(a slog.Attr) bool {
		switch a.Key {
		case "server":
			server = a.Value.String()
		case "message":
			message = a.Value.String()
		default:
			rest = append(rest, a.Key+"="+a.Value.String())
		}
		return true
	}
	for _, a := range h.attrs {
		collect(a)
	}
	r.Attrs(collect)
	e := &TraceEntry{Server: server}
	switch r.Message {
	case "mcp send", "mcp recv":
		e.Dir = strings.TrimPrefix(r.Message, "mcp ")
		e.Message = message
		var head struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
		}
		if json.Unmarshal([]byte(message), &head) == nil {
			e.Method, e.ID = head.Method, head.ID
		}
		h.log.add(Event{Time: r.Time, Kind: "trace", Trace: e})
	default:
		if r.Level < slog.LevelInfo {
			return nil
		}
		e.Dir, e.Level = "log", r.Level.String()
		e.Message = r.Message
		if message != "" {
			rest = append(rest, "message="+message)
		}
		if len(rest) > 0 {
			e.Message += " " + strings.Join(rest, " ")
		}
		h.log.add(Event{Time: r.Time, Kind: "log", Trace: e})
	}
	return nil
}

func (h *traceHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &traceHandler{log: h.log, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h *traceHandler) WithGroup(string) slog.Handler { return h }

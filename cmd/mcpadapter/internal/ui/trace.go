package ui

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Recorder receives the clients' logs, the protocol trace among them,
// for the page's timeline. Give Logger to the clients
// (mcpadapter.ClientOptions.Logger, with Trace set) before they connect,
// and the Recorder to New.
type Recorder struct {
	log *eventLog
}

// NewRecorder returns a Recorder keeping the latest 20,000 events, and
// at most about 16 MB of them: a server flooding the trace cannot grow
// the inspector (or the page) beyond that.
func NewRecorder() *Recorder {
	return &Recorder{log: newEventLog(20000, 16<<20)}
}

// maxTraceText bounds one message or log line as the trace keeps it.
const maxTraceText = 64 << 10

// clip returns s cut to at most limit bytes (on a UTF-8 boundary), with
// a note of its whole length when it is cut.
func clip(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "… (" + strconv.Itoa(len(s)) + " bytes, cut)"
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
		e.Message = clip(message, maxTraceText)
		var head struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
		}
		if json.Unmarshal([]byte(message), &head) == nil {
			e.Method, e.ID = clip(head.Method, 256), head.ID
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
		e.Message = clip(e.Message, maxTraceText)
		h.log.add(Event{Time: r.Time, Kind: "log", Trace: e})
	}
	return nil
}

func (h *traceHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &traceHandler{log: h.log, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h *traceHandler) WithGroup(string) slog.Handler { return h }

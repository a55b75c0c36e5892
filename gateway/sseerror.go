package gateway

import (
	"bytes"
	"net/http"
	"strings"
)

// sseErrorWriter is the ResponseWriter go-sdk's stateless handler writes
// the response of a 2026-07-28 request to. go-sdk's transport gives some
// JSON-RPC errors an HTTP status of their own (-32601: 404; -32602, an
// unsupported protocol version, missing client capabilities: 400) and
// writes them as a JSON body with that status; when the request's stream
// had begun (status 200, an event stream, events written: a progress
// report, a log message), it writes the error's JSON after the events
// anyway, its status too late and without SSE framing, where no client
// reads it. sseErrorWriter writes that error as an SSE event of its own
// (event: message), as the fast path does (fastConn.writeAnswer): an
// error status (400 or more) that comes after an event stream's events (a
// WriteHeader past the header, which net/http would drop) marks the next
// Write as the error's JSON. Every other status, header and body goes
// through as written.
type sseErrorWriter struct {
	http.ResponseWriter
	headed bool // the header was sent
	sse    bool // ... with status 200 and an event stream
	wrote  bool // some of the body was written
	late   bool // an error status came after the stream's events: the next Write is the error's JSON
}

// WriteHeader implements http.ResponseWriter.
func (w *sseErrorWriter) WriteHeader(code int) {
	if code >= 400 && w.headed && w.sse && w.wrote {
		// go-sdk's error status after the stream's events.
		w.late = true
		return
	}
	if code >= 200 && !w.headed {
		w.headed = true
		w.sse = code == http.StatusOK && isEventStream(w.Header().Get("Content-Type"))
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (w *sseErrorWriter) Write(p []byte) (int, error) {
	if !w.headed {
		w.WriteHeader(http.StatusOK)
	}
	if w.late {
		w.late = false
		if _, err := w.ResponseWriter.Write(sseMessageEvent(p)); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if len(p) > 0 {
		w.wrote = true
	}
	return w.ResponseWriter.Write(p)
}

// Flush implements http.Flusher.
func (w *sseErrorWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// Unwrap returns the writer wrapped, for http.ResponseController.
func (w *sseErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// isEventStream reports whether the Content-Type ct is text/event-stream.
func isEventStream(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "text/event-stream")
}

// sseMessageEvent returns msg, a JSON-RPC message, as an SSE event named
// message: one data line for each of its lines (a carriage return, which
// JSON has only as white space, dropped: it would end an SSE line).
func sseMessageEvent(msg []byte) []byte {
	msg = bytes.TrimRight(msg, "\r\n")
	buf := make([]byte, 0, len("event: message\n\n")+len(msg)+8)
	buf = append(buf, "event: message\n"...)
	for {
		line, rest, more := bytes.Cut(msg, []byte{'\n'})
		buf = append(append(append(buf, "data: "...), bytes.ReplaceAll(line, []byte{'\r'}, nil)...), '\n')
		if !more {
			break
		}
		msg = rest
	}
	return append(buf, '\n')
}

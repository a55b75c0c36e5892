package testserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ScriptedTool is the tool whose calls a [ScriptedHTTP] peer answers with
// a script instead of passing them to its server: its arguments are an
// [HTTPScript] ([HTTPScriptArgs]).
const ScriptedTool = "scripted"

// ScriptedPadMark is replaced, in a scripted body or event, by
// HTTPScript.Pad bytes of the letter x: a large answer from a small script.
const ScriptedPadMark = "@PAD@"

// HTTPScript is how a [ScriptedHTTP] peer answers one POST of a
// tools/call of [ScriptedTool]: a status, headers, a body and an event
// stream, written in that order. In Body, and in the Data and Raw of
// Events, [ScriptedIDMark] is replaced by the request's id (its JSON text)
// and [ScriptedPadMark] by Pad bytes of x.
type HTTPScript struct {
	// Status is the HTTP status; 0 is 200.
	Status int `json:"status,omitempty"`
	// ContentType is the Content-Type header. "" is text/event-stream
	// when Events is set and application/json otherwise; "-" sends none.
	ContentType string `json:"contentType,omitempty"`
	// Header holds further response headers.
	Header map[string]string `json:"header,omitempty"`
	// Body is written as it is, before Events. A Body with no Events is
	// sent with its Content-Length.
	Body string `json:"body,omitempty"`
	// Events is an event stream, each event flushed as it is written.
	Events []SSEEvent `json:"events,omitempty"`
	// CRLF ends the stream's lines with \r\n instead of \n.
	CRLF bool `json:"crlf,omitempty"`
	// DelayMs waits before the status is written; the wait ends early
	// (and the call is marked abandoned) when the client gives up.
	DelayMs int `json:"delayMs,omitempty"`
	// Pad is the number of bytes ScriptedPadMark stands for.
	Pad int `json:"pad,omitempty"`
	// Resume answers a GET whose Last-Event-ID is the id of one of
	// Events (go-sdk's way to resume a stream that ended before its
	// answer). Nil refuses such a GET with 405 Method Not Allowed.
	Resume *HTTPScript `json:"resume,omitempty"`
	// Gate, if not "", holds the answer (before its status) until the
	// test opens the gate of that name ([ScriptedHTTP.Open]); the wait
	// ends early, as DelayMs does, when the client gives up.
	Gate string `json:"gate,omitempty"`
}

// SSEEvent is one event of a scripted stream: its fields, in the order
// listed, then a blank line; or Raw alone.
type SSEEvent struct {
	// DelayMs waits before the event is written (ends early as
	// HTTPScript.DelayMs does).
	DelayMs int `json:"delayMs,omitempty"`
	// Gate, if not "", holds the event until the test opens the gate of
	// that name, as HTTPScript.Gate does.
	Gate string `json:"gate,omitempty"`
	// Comment, if not "", is sent as a ": comment" line.
	Comment string `json:"comment,omitempty"`
	// Event, if not "", is the event's type.
	Event string `json:"event,omitempty"`
	// ID, if not "", is the event's id.
	ID string `json:"id,omitempty"`
	// Retry, if positive, is the reconnection delay in milliseconds.
	Retry int `json:"retry,omitempty"`
	// Data is sent as one data line per line.
	Data string `json:"data,omitempty"`
	// Raw, if not "", is written as it is instead of the fields above.
	Raw string `json:"raw,omitempty"`
}

// HTTPScriptArgs returns the arguments of a call of [ScriptedTool] that a
// [ScriptedHTTP] peer answers with s.
func HTTPScriptArgs(s HTTPScript) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// ScriptedCall is one POST of a call of [ScriptedTool] a [ScriptedHTTP]
// peer received.
type ScriptedCall struct {
	// ID is the request's id, as JSON text.
	ID string
	// Header is the request's HTTP header.
	Header http.Header
	// Body is the request as sent.
	Body []byte
	// Abandoned reports that the request ended before its script was
	// written out (the client cancelled or timed out).
	Abandoned bool
}

// ScriptedHTTP is a scripted streamable HTTP peer for differential tests:
// a real go-sdk streamable handler (of either era) serving the tools of
// [New] and [ScriptedTool], in front of which the POSTs of tools/call of
// [ScriptedTool] are answered by their script. Connecting, discovery,
// listing and every other call are real. It is served on 127.0.0.1 and
// closed by the cleanup of the test that started it.
//
// A GET with a Last-Event-ID is answered from the Resume of the script
// that sent that event id last: calls with the same event ids are
// expected one after the other, not at once.
type ScriptedHTTP struct {
	// URL is the MCP endpoint.
	URL string

	inner http.Handler
	srv   *httptest.Server

	mu        sync.Mutex
	resumes   map[string]resumeAt // by event id
	calls     []ScriptedCall
	cancelled []string // requestId of each notifications/cancelled, as JSON text
	gates     map[string]*gate
	sse       *HTTPScript // the answer to the next standalone GET
	deletes   int
	deleted   chan struct{} // closed at the first DELETE
}

// gate is a named point where a script waits for the test.
type gate struct {
	reached chan struct{} // closed when a request waits there
	open    chan struct{} // closed by Open
}

type resumeAt struct {
	script *HTTPScript
	id     string
	call   int
}

// StartScriptedHTTP starts a [ScriptedHTTP] peer in front of a server of
// era: a stateful handler with sessions for [Legacy] (2025-11-25), a
// stateless one for [Modern] (2026-07-28, which go-sdk only serves
// statelessly). jsonResponse makes the real handler answer with
// application/json instead of event streams.
func StartScriptedHTTP(t testing.TB, era Era, jsonResponse bool) *ScriptedHTTP {
	t.Helper()
	srv := New(Options{Era: era})
	srv.AddTool(&mcp.Tool{Name: ScriptedTool, Description: "Answered by the scripted HTTP peer, never by the server.",
		InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{text("the scripted call reached the server")}}, nil
		})
	o := &mcp.StreamableHTTPOptions{Stateless: era == Modern, JSONResponse: jsonResponse}
	p := &ScriptedHTTP{
		inner:   mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, o),
		resumes: make(map[string]resumeAt),
		gates:   make(map[string]*gate),
		deleted: make(chan struct{}),
	}
	p.srv = httptest.NewServer(p)
	p.URL = p.srv.URL + "/mcp"
	t.Cleanup(func() {
		p.srv.CloseClientConnections()
		p.srv.Close()
	})
	return p
}

// Calls returns the calls of [ScriptedTool] received so far, in order.
func (p *ScriptedHTTP) Calls() []ScriptedCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]ScriptedCall, len(p.calls))
	for i, c := range p.calls {
		c.Header = c.Header.Clone()
		out[i] = c
	}
	return out
}

// Cancelled returns the requestId of every notifications/cancelled
// received so far (as JSON text), in order.
func (p *ScriptedHTTP) Cancelled() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.cancelled...)
}

// gate returns the gate of name, made on first use.
func (p *ScriptedHTTP) gate(name string) *gate {
	p.mu.Lock()
	defer p.mu.Unlock()
	g := p.gates[name]
	if g == nil {
		g = &gate{reached: make(chan struct{}), open: make(chan struct{})}
		p.gates[name] = g
	}
	return g
}

// Reached returns a channel closed once a script waits at the gate of
// name (HTTPScript.Gate, SSEEvent.Gate).
func (p *ScriptedHTTP) Reached(name string) <-chan struct{} { return p.gate(name).reached }

// Open lets the scripts waiting at the gate of name, and every later one,
// go on. Open a gate once.
func (p *ScriptedHTTP) Open(name string) { close(p.gate(name).open) }

// Standalone makes the peer answer the next GET without a Last-Event-ID
// (go-sdk's standalone stream of a 2025-11-25 session) with s instead of
// the real handler's stream.
func (p *ScriptedHTTP) Standalone(s HTTPScript) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sse = &s
}

// Deleted returns a channel closed once the peer receives a DELETE (a
// client ending its session).
func (p *ScriptedHTTP) Deleted() <-chan struct{} { return p.deleted }

// wait waits at the gate of name ("" : none), or until ctx ends (then
// false).
func (p *ScriptedHTTP) wait(ctx context.Context, name string) bool {
	if name == "" {
		return ctx.Err() == nil
	}
	g := p.gate(name)
	p.mu.Lock()
	select {
	case <-g.reached:
	default:
		close(g.reached)
	}
	p.mu.Unlock()
	select {
	case <-g.open:
		return true
	case <-ctx.Done():
		return false
	}
}

// ServeHTTP answers scripted calls and resumptions, and passes everything
// else to the real handler.
func (p *ScriptedHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodDelete {
		p.mu.Lock()
		if p.deletes++; p.deletes == 1 {
			close(p.deleted)
		}
		p.mu.Unlock()
	}
	p.mu.Lock()
	sse := p.sse
	if r.Method == http.MethodGet && len(r.Header.Values("Last-Event-ID")) == 0 {
		p.sse = nil
	} else {
		sse = nil
	}
	p.mu.Unlock()
	switch {
	case sse != nil:
		p.playScript(w, r.Context(), sse, "null", -1)
		return
	case r.Method == http.MethodGet && len(r.Header.Values("Last-Event-ID")) > 0:
		p.resume(w, r)
		return
	case r.Method != http.MethodPost || r.Body == nil:
		p.inner.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		p.inner.ServeHTTP(w, r)
		return
	}
	switch {
	case msg.Method == "notifications/cancelled":
		p.mu.Lock()
		p.cancelled = append(p.cancelled, string(msg.Params.RequestID))
		p.mu.Unlock()
	case msg.Method == "tools/call" && msg.Params.Name == ScriptedTool:
		var s HTTPScript
		if err := json.Unmarshal(msg.Params.Arguments, &s); err != nil {
			http.Error(w, "scripted peer: the arguments are not a script: "+err.Error(), http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.calls = append(p.calls, ScriptedCall{ID: string(msg.ID), Header: r.Header.Clone(), Body: body})
		n := len(p.calls) - 1
		p.mu.Unlock()
		p.play(w, r, &s, string(msg.ID), n)
		return
	}
	p.inner.ServeHTTP(w, r)
}

// resume answers a GET with a Last-Event-ID from the script registered
// for that event id.
func (p *ScriptedHTTP) resume(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	at, ok := p.resumes[r.Header.Get("Last-Event-ID")]
	p.mu.Unlock()
	if !ok || at.script == nil {
		http.Error(w, "scripted peer: no stream to resume", http.StatusMethodNotAllowed)
		return
	}
	p.play(w, r, at.script, at.id, at.call)
}

// play writes s as the answer to the request with id (JSON text), call
// n; it marks the call abandoned if the request ends first.
func (p *ScriptedHTTP) play(w http.ResponseWriter, r *http.Request, s *HTTPScript, id string, n int) {
	if !p.playScript(w, r.Context(), s, id, n) {
		p.mu.Lock()
		p.calls[n].Abandoned = true
		p.mu.Unlock()
	}
}

func (p *ScriptedHTTP) playScript(w http.ResponseWriter, ctx context.Context, s *HTTPScript, id string, n int) bool {
	if !pause(ctx, s.DelayMs) || !p.wait(ctx, s.Gate) {
		return false
	}
	p.mu.Lock()
	for _, ev := range s.Events {
		if ev.ID != "" {
			p.resumes[ev.ID] = resumeAt{script: s.Resume, id: id, call: n}
		}
	}
	p.mu.Unlock()
	h := w.Header()
	switch ct := s.ContentType; {
	case ct == "-":
	case ct != "":
		h.Set("Content-Type", ct)
	case s.Events != nil:
		h.Set("Content-Type", "text/event-stream")
	default:
		h.Set("Content-Type", "application/json")
	}
	for k, v := range s.Header {
		h.Set(k, v)
	}
	status := s.Status
	if status == 0 {
		status = http.StatusOK
	}
	fill := func(text string) string {
		text = strings.ReplaceAll(text, ScriptedIDMark, id)
		if s.Pad > 0 && s.Pad <= 64<<20 {
			text = strings.ReplaceAll(text, ScriptedPadMark, strings.Repeat("x", s.Pad))
		}
		return text
	}
	if s.Events == nil {
		h.Set("Content-Length", strconv.Itoa(len(fill(s.Body))))
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, fill(s.Body))
	flush(w)
	nl := "\n"
	if s.CRLF {
		nl = "\r\n"
	}
	for _, ev := range s.Events {
		if !pause(ctx, ev.DelayMs) || !p.wait(ctx, ev.Gate) {
			return false
		}
		if _, err := io.WriteString(w, eventText(ev, nl, fill)); err != nil {
			return ctx.Err() == nil
		}
		flush(w)
	}
	return ctx.Err() == nil
}

// eventText is ev as written on a stream whose lines end in nl.
func eventText(ev SSEEvent, nl string, fill func(string) string) string {
	if ev.Raw != "" {
		return fill(ev.Raw)
	}
	var b strings.Builder
	if ev.Comment != "" {
		b.WriteString(": " + ev.Comment + nl)
	}
	if ev.Event != "" {
		b.WriteString("event: " + ev.Event + nl)
	}
	if ev.ID != "" {
		b.WriteString("id: " + ev.ID + nl)
	}
	if ev.Retry > 0 {
		b.WriteString("retry: " + strconv.Itoa(ev.Retry) + nl)
	}
	if ev.Data != "" {
		for line := range strings.SplitSeq(fill(ev.Data), "\n") {
			b.WriteString("data: " + line + nl)
		}
	}
	b.WriteString(nl)
	return b.String()
}

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// pause waits ms milliseconds, or until ctx ends (then false).
func pause(ctx context.Context, ms int) bool {
	if ms <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

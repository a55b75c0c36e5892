// Package fakeopenai is a scripted, loopback HTTP server that speaks the
// OpenAI chat-completions wire format (POST /v1/chat/completions, also
// /chat/completions), for tests that need an LLM where none is reachable.
//
// It answers both plain requests (a "chat.completion" JSON object) and
// streaming ones ("stream": true: a text/event-stream of
// "chat.completion.chunk" objects ending in "data: [DONE]"), in the shapes the
// eino-ext OpenAI model and go-openai clients accept. The server listens on
// 127.0.0.1, so a CLI started as a subprocess of the test can be pointed at
// Server.URL as its base URL.
package fakeopenai

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// EndedContent is the content of the reply sent for every request after the
// scripted turns are used up (and no reply function is set).
const EndedContent = "(script ended)"

// A Turn is the scripted reply to one request.
type Turn struct {
	// Content is the assistant text (streamed in several chunks when the
	// client streams).
	Content string
	// ToolCalls, if any, are returned as tool_calls (finish_reason
	// "tool_calls").
	ToolCalls []ToolCall
	// Status, if not zero, makes the reply an HTTP error of that status
	// with OpenAI's error body: {"error": {"message": Error, "type": ...,
	// "code": Code}}, as OpenAI answers a bad key (401, "invalid_api_key")
	// or an unknown model (404, "model_not_found").
	Status int
	// Error and Code are the error's message and code when Status is set.
	Error, Code string
}

// A ToolCall is one function call requested by the assistant, or recorded in
// an assistant message of a request.
//
// In a Turn, an empty ID is replaced by a generated unique "call_…" ID and empty
// Arguments by "{}".
type ToolCall struct{ ID, Name, Arguments string }

// Request is one chat-completions request as the server received and decoded
// it.
type Request struct {
	// Model is the request's "model".
	Model string
	// Stream is the request's "stream" flag.
	Stream bool
	// Authorization is the request's Authorization header, e.g.
	// "Bearer sk-...".
	Authorization string
	// Messages are the request's "messages", in order.
	Messages []Message
	// Tools are the function tools of the request's "tools".
	Tools []Tool
	// Raw is the whole request body as sent.
	Raw json.RawMessage
}

// Message is one message of a request.
type Message struct {
	// Role is "system", "user", "assistant" or "tool".
	Role string
	// Content is the message text; when the client sent an array of content
	// parts, it is the concatenation of their texts.
	Content string
	// Name is the optional "name" of the message.
	Name string
	// ToolCallID is the "tool_call_id" of a tool message.
	ToolCallID string
	// ToolCalls are the "tool_calls" of an assistant message.
	ToolCalls []ToolCall
}

// Tool is one function tool offered to the model in a request.
type Tool struct {
	// Name and Description are the function's name and description.
	Name, Description string
	// Parameters is the function's JSON Schema as sent.
	Parameters json.RawMessage
}

// Server is a scripted chat-completions server on 127.0.0.1.
type Server struct {
	// URL is the base URL to give clients, ending in /v1
	// (e.g. "http://127.0.0.1:41234/v1").
	URL string

	srv     *http.Server
	handles sync.WaitGroup

	mu       sync.Mutex
	closed   bool
	turns    []Turn
	next     int
	reply    func(Request) Turn
	requests []Request
	served   int // replies sent so far, for response and tool-call IDs
}

// Start starts a server that answers requests with turns in order; after the
// last it answers with a final Turn{Content: "(script ended)"}; when a reply
// function is set with SetReply it is used instead of the fixed turns.
// The server is closed when the test ends.
func Start(t testing.TB, turns ...Turn) *Server {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fakeopenai: listen: %v", err)
	}
	s := &Server{
		URL:   "http://" + ln.Addr().String() + "/v1",
		turns: append([]Turn(nil), turns...),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", s.handleChat)
	mux.HandleFunc("/chat/completions", s.handleChat)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "fakeopenai: no route for "+r.Method+" "+r.URL.Path)
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(func() {
		s.mu.Lock()
		s.closed = true // no handler starts counting after this
		s.mu.Unlock()
		_ = s.srv.Close()
		s.handles.Wait()
	})
	return s
}

// SetReply sets a function that computes the reply to each request from the
// request itself (e.g. to assert on the tool results the model was sent).
// Set it before requests arrive; it is used instead of the scripted turns.
// It may be called concurrently when requests overlap, and may call Requests.
func (s *Server) SetReply(f func(req Request) Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reply = f
}

// Requests returns the requests received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = r.clone()
	}
	return out
}

func (r Request) clone() Request {
	c := r
	c.Raw = append(json.RawMessage(nil), r.Raw...)
	c.Messages = make([]Message, len(r.Messages))
	for i, m := range r.Messages {
		m.ToolCalls = append([]ToolCall(nil), m.ToolCalls...)
		c.Messages[i] = m
	}
	c.Tools = make([]Tool, len(r.Tools))
	for i, tl := range r.Tools {
		tl.Parameters = append(json.RawMessage(nil), tl.Parameters...)
		c.Tools[i] = tl
	}
	return c
}

// Wire format of a request (only the fields the server looks at).
type wireRequest struct {
	Model         string        `json:"model"`
	Stream        bool          `json:"stream"`
	Messages      []wireMessage `json:"messages"`
	Tools         []wireTool    `json:"tools"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []wireToolCall  `json:"tool_calls"`
}

type wireToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string  `json:"name,omitempty"`
		Arguments *string `json:"arguments,omitempty"`
	} `json:"function"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// decodeContent turns a message's "content" (a string, an array of parts or
// null/absent) into text.
func decodeContent(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content is neither a string nor an array of parts: %w", err)
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

func decodeRequest(body []byte, auth string) (Request, *wireRequest, error) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return Request{}, nil, fmt.Errorf("decoding request body: %w", err)
	}
	req := Request{
		Model:         w.Model,
		Stream:        w.Stream,
		Authorization: auth,
		Raw:           json.RawMessage(body),
	}
	for i, m := range w.Messages {
		content, err := decodeContent(m.Content)
		if err != nil {
			return Request{}, nil, fmt.Errorf("messages[%d]: %w", i, err)
		}
		msg := Message{Role: m.Role, Content: content, Name: m.Name, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			call := ToolCall{ID: tc.ID, Name: tc.Function.Name}
			if tc.Function.Arguments != nil {
				call.Arguments = *tc.Function.Arguments
			}
			msg.ToolCalls = append(msg.ToolCalls, call)
		}
		req.Messages = append(req.Messages, msg)
	}
	for _, tl := range w.Tools {
		req.Tools = append(req.Tools, Tool{
			Name:        tl.Function.Name,
			Description: tl.Function.Description,
			Parameters:  tl.Function.Parameters,
		})
	}
	return req, &w, nil
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "fakeopenai: server closed")
		return
	}
	s.handles.Add(1)
	s.mu.Unlock()
	defer s.handles.Done()

	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, "fakeopenai: use POST")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "fakeopenai: reading body: "+err.Error())
		return
	}
	req, wire, err := decodeRequest(body, r.Header.Get("Authorization"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "fakeopenai: "+err.Error())
		return
	}

	s.mu.Lock()
	s.requests = append(s.requests, req.clone())
	reply := s.reply
	var turn Turn
	if reply == nil {
		if s.next < len(s.turns) {
			turn = s.turns[s.next]
			s.next++
		} else {
			turn = Turn{Content: EndedContent}
		}
	}
	s.served++
	n := s.served
	s.mu.Unlock()
	if reply != nil {
		turn = reply(req.clone())
	}

	if turn.Status != 0 {
		writeAPIError(w, turn.Status, turn.Error, turn.Code)
		return
	}
	resp := newResponse(n, req.Model, turn, len(body))
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp.completion())
		return
	}
	includeUsage := wire.StreamOptions != nil && wire.StreamOptions.IncludeUsage
	s.stream(w, resp, includeUsage)
}

// response is one reply, ready to be written in either format.
type response struct {
	id      string
	created int64
	model   string
	content string
	calls   []ToolCall
	usage   wireUsage
}

type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func newResponse(n int, model string, turn Turn, requestBytes int) response {
	res := response{
		id:      fmt.Sprintf("chatcmpl-fake%06d", n),
		created: time.Now().Unix(),
		model:   model,
		content: turn.Content,
	}
	completionChars := len(turn.Content)
	for i, tc := range turn.ToolCalls {
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_%d_%d", n, i)
		}
		if tc.Arguments == "" {
			tc.Arguments = "{}"
		}
		completionChars += len(tc.Name) + len(tc.Arguments)
		res.calls = append(res.calls, tc)
	}
	// A rough token count: about four bytes a token.
	res.usage.PromptTokens = (requestBytes + 3) / 4
	res.usage.CompletionTokens = (completionChars+3)/4 + 1
	res.usage.TotalTokens = res.usage.PromptTokens + res.usage.CompletionTokens
	return res
}

func (res response) finishReason() string {
	if len(res.calls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

type wireOutToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func (res response) completion() map[string]any {
	var content any // JSON null when the assistant only calls tools, as OpenAI does
	if res.content != "" || len(res.calls) == 0 {
		content = res.content
	}
	msg := map[string]any{
		"role":    "assistant",
		"content": content,
		"refusal": nil,
	}
	if len(res.calls) > 0 {
		calls := make([]wireOutToolCall, len(res.calls))
		for i, tc := range res.calls {
			calls[i].ID = tc.ID
			calls[i].Type = "function"
			calls[i].Function.Name = tc.Name
			calls[i].Function.Arguments = tc.Arguments
		}
		msg["tool_calls"] = calls
	}
	return map[string]any{
		"id":      res.id,
		"object":  "chat.completion",
		"created": res.created,
		"model":   res.model,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       msg,
			"logprobs":      nil,
			"finish_reason": res.finishReason(),
		}},
		"usage":              res.usage,
		"system_fingerprint": "fp_fakeopenai",
	}
}

// chunks returns the "chat.completion.chunk" objects of a streamed reply, in
// order, without the usage-only chunk.
func (res response) chunks() []map[string]any {
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{
			"id":      res.id,
			"object":  "chat.completion.chunk",
			"created": res.created,
			"model":   res.model,
			"choices": []any{map[string]any{
				"index":         0,
				"delta":         delta,
				"logprobs":      nil,
				"finish_reason": finish,
			}},
			"system_fingerprint": "fp_fakeopenai",
		}
	}
	out := []map[string]any{chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil)}
	for _, part := range splitRunes(res.content, 3) {
		out = append(out, chunk(map[string]any{"content": part}, nil))
	}
	for i, tc := range res.calls {
		head := wireOutToolCall{Index: &i, ID: tc.ID, Type: "function"}
		head.Function.Name = tc.Name
		out = append(out, chunk(map[string]any{"tool_calls": []wireOutToolCall{head}}, nil))
		for _, part := range splitRunes(tc.Arguments, 2) {
			d := wireOutToolCall{Index: &i}
			d.Function.Arguments = part
			out = append(out, chunk(map[string]any{"tool_calls": []wireOutToolCall{d}}, nil))
		}
	}
	out = append(out, chunk(map[string]any{}, res.finishReason()))
	return out
}

// usageChunk is the final chunk sent when the client asked for
// stream_options.include_usage: no choices, only usage.
func (res response) usageChunk() map[string]any {
	return map[string]any{
		"id":                 res.id,
		"object":             "chat.completion.chunk",
		"created":            res.created,
		"model":              res.model,
		"choices":            []any{},
		"usage":              res.usage,
		"system_fingerprint": "fp_fakeopenai",
	}
}

func (s *Server) stream(w http.ResponseWriter, res response, includeUsage bool) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)

	chunks := res.chunks()
	if includeUsage {
		chunks = append(chunks, res.usageChunk())
	}
	for _, c := range chunks {
		b, err := json.Marshal(c)
		if err != nil {
			return
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	_ = rc.Flush()
}

// splitRunes splits s into at most n pieces of about equal rune count, never
// inside a UTF-8 sequence. An empty s gives no pieces.
func splitRunes(s string, n int) []string {
	r := []rune(s)
	if len(r) == 0 {
		return nil
	}
	if n > len(r) {
		n = len(r)
	}
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, string(r[i*len(r)/n:(i+1)*len(r)/n]))
	}
	return out
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeAPIError(w, status, msg, "")
}

// writeAPIError writes an error in OpenAI's format; an empty code is null.
func writeAPIError(w http.ResponseWriter, status int, msg, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	var c any
	if code != "" {
		c = code
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": msg,
		"type":    "invalid_request_error",
		"param":   nil,
		"code":    c,
	}})
}

package testserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// rawTaskTimes are the times and poll interval of a RawHTTP task.
const rawTaskTimes = `"createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":60000,"pollInterval":10`

// NullQuestionResult is a result asking a question that is null, as a
// hostile server may send: go-sdk's decoding of any result with
// inputRequests (tools/call, prompts/get, resources/read) dereferences
// nil on it.
const NullQuestionResult = `{"content":[],"messages":[],"contents":[],"inputRequests":{"q":null}}`

// RawHTTP is a handshake-era (2025-11-25) MCP server over HTTP, JSON
// answers and no session, written by hand so that it can answer what
// go-sdk's servers never send. It offers a tool "t", a tool "task" that
// always runs as a 2025-11-25 task (its task "x" is completed at once), a
// prompt "p" and a resource "test://r"; the requests named in the answers
// given to StartRawHTTP are answered with their result as given. It
// counts the requests of each method.
type RawHTTP struct {
	URL     string
	answers map[string]string
	mu      sync.Mutex
	seen    map[string]int
}

// StartRawHTTP starts a RawHTTP on 127.0.0.1 that answers the requests
// named in answers with their result (a JSON text): a key is a method
// ("prompts/get"), or a method and the name in its params ("tools/call
// t"), which comes first. It stops when the test ends.
func StartRawHTTP(t testing.TB, answers map[string]string) *RawHTTP {
	t.Helper()
	s := &RawHTTP{answers: answers, seen: map[string]int{}}
	ts := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}

// Count returns how many requests of method the server got.
func (s *RawHTTP) Count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[method]
}

func (s *RawHTTP) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(b, &req) != nil || len(req.ID) == 0 {
		w.WriteHeader(http.StatusAccepted) // a notification, or a response
		return
	}
	s.mu.Lock()
	s.seen[req.Method]++
	s.mu.Unlock()
	result, ok := s.answers[req.Method+" "+req.Params.Name]
	if !ok {
		result, ok = s.answers[req.Method]
	}
	if !ok {
		result = rawAnswer(req.Method, req.Params.Name)
	}
	if result == "" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"error":{"code":-32601,"message":"method not found"}}`)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+result+`}`)
}

// rawAnswer is a RawHTTP's own result for method (tool: the tool called),
// "" for a method it does not know.
func rawAnswer(method, tool string) string {
	switch method {
	case "initialize":
		return `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"prompts":{},"resources":{},"tasks":{"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"raw","version":"1"}}`
	case "ping":
		return `{}`
	case "tools/list":
		return `{"tools":[{"name":"t","inputSchema":{"type":"object"}},{"name":"task","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}]}`
	case "prompts/list":
		return `{"prompts":[{"name":"p"}]}`
	case "resources/list":
		return `{"resources":[{"uri":"test://r","name":"r"}]}`
	case "resources/templates/list":
		return `{"resourceTemplates":[]}`
	case "tools/call":
		if tool == "task" {
			return `{"task":{"taskId":"x","status":"working",` + rawTaskTimes + `}}`
		}
		return `{"content":[{"type":"text","text":"plain"}]}`
	case "tasks/get":
		return `{"taskId":"x","status":"completed",` + rawTaskTimes + `}`
	case "tasks/result":
		return `{"content":[{"type":"text","text":"task done"}]}`
	}
	if strings.HasPrefix(method, "tasks/") {
		return `{}`
	}
	return ""
}

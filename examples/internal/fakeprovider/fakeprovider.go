// Package fakeprovider runs scripted model providers on loopback, each
// speaking one provider's wire format: OpenAI Chat Completions, OpenAI
// Responses, Anthropic Messages and Gemini generateContent. The examples
// use them so that they run with no network and no key.
//
// Every fake follows the same script: to a request without tool results
// it answers with the Script's calls, all in one turn (parallel calls);
// to a request that carries a result for every one of those calls it
// answers with a final text built from the results. It checks what it
// gets: the tools must be there, decode into the provider SDK's own
// types and declare the scripted tools with an object schema; the
// results must answer the calls it made. A request that fails a check is
// answered with the provider's error format and HTTP 400, and the fake
// remembers the problem (Err).
package fakeprovider

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// A Call is one tool call of the scripted first turn.
type Call struct {
	Name string
	Args map[string]any
}

// A Script is what a fake answers.
type Script struct {
	// Calls are made together in the first turn.
	Calls []Call
}

// A Server is one fake provider on a loopback port.
type Server struct {
	// URL is the server's base URL (http://127.0.0.1:port).
	URL string

	srv    *httptest.Server
	script Script

	mu       sync.Mutex
	requests int
	errs     []error
}

func start(script Script, h func(s *Server, w http.ResponseWriter, r *http.Request) error, fail func(w http.ResponseWriter, msg string)) *Server {
	s := &Server{script: script}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests++
		s.mu.Unlock()
		if err := h(s, w, r); err != nil {
			s.mu.Lock()
			s.errs = append(s.errs, err)
			s.mu.Unlock()
			fail(w, err.Error())
		}
	}))
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Requests is how many requests the server got.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Err joins the problems found in the requests (nil when there were none).
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.errs...)
}

// callID is the id the fake gives the i-th scripted call.
func callID(prefix string, i int) string { return fmt.Sprintf("%s%d", prefix, i+1) }

// checkTools checks that every scripted tool is declared, with an object
// schema (params nil means the provider allows leaving them out).
func (s *Server) checkTools(declared map[string]json.RawMessage) error {
	if len(declared) == 0 {
		return errors.New("the request declares no tools")
	}
	for _, c := range s.script.Calls {
		params, ok := declared[c.Name]
		if !ok {
			return fmt.Errorf("tool %q is not declared (declared: %s)", c.Name, names(declared))
		}
		if params == nil {
			continue
		}
		var schema struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(params, &schema); err != nil || !strings.EqualFold(schema.Type, "object") {
			return fmt.Errorf("tool %q: parameters %s: want an object schema", c.Name, params)
		}
	}
	return nil
}

func names(m map[string]json.RawMessage) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return strings.Join(out, ", ")
}

// final builds the last answer from the results, in script order; a
// result the model gets as an error is quoted as one.
func (s *Server) final(prefix string, results map[string]string) (string, error) {
	var parts []string
	for i, c := range s.script.Calls {
		r, ok := results[callID(prefix, i)]
		if !ok {
			return "", fmt.Errorf("no result for call %s (%s)", callID(prefix, i), c.Name)
		}
		parts = append(parts, fmt.Sprintf("%s says %q", c.Name, r))
	}
	return "From the tools: " + strings.Join(parts, "; ") + ".", nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func decode(r *http.Request, v any) error {
	if r.Method != http.MethodPost {
		return fmt.Errorf("%s %s: want POST", r.Method, r.URL.Path)
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 8<<20)).Decode(v); err != nil {
		return fmt.Errorf("%s: request body: %w", r.URL.Path, err)
	}
	return nil
}

// textOf reads a result that is a JSON string or an array of parts with
// "text" (images are counted as "[image]").
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var out []string
	for _, p := range parts {
		switch {
		case p.Text != "":
			out = append(out, p.Text)
		case strings.Contains(p.Type, "image"):
			out = append(out, "[image]")
		}
	}
	return strings.Join(out, "\n")
}

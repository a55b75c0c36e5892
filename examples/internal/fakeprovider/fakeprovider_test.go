package fakeprovider

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestChecks: each fake refuses, in its provider's error format, a
// request without the scripted tools and one with results for calls it
// never made, and remembers why.
func TestChecks(t *testing.T) {
	script := Script{Calls: []Call{{Name: "get_weather", Args: map[string]any{"city": "Paris"}}}}
	weather := `"parameters":{"type":"object","properties":{"city":{"type":"string"}}}`
	cases := []struct {
		name, path, body, want string
		srv                    func(Script) *Server
	}{
		{"chat no tools", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "declares no tools", OpenAIChat},
		{"chat stray result", "/v1/chat/completions", `{"model":"m","messages":[{"role":"tool","tool_call_id":"x","content":"r"}],
			"tools":[{"type":"function","function":{"name":"get_weather",` + weather + `}}]}`, "no result for call call_1", OpenAIChat},
		{"responses not object", "/v1/responses", `{"model":"m","input":"hi","tools":[{"type":"function","name":"get_weather","parameters":{"type":"string"}}]}`, "want an object schema", OpenAIResponses},
		{"anthropic other tool", "/v1/messages", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}],
			"tools":[{"name":"other","input_schema":{"type":"object"}}]}`, `tool "get_weather" is not declared`, Anthropic},
		{"gemini bad path", "/v1/models/m:generateContent", `{}`, "want /v1beta/models/", Gemini},
		{"gemini both schemas", "/v1beta/models/m:generateContent", `{"contents":[],"tools":[{"functionDeclarations":[{"name":"get_weather",
			"parameters":{"type":"OBJECT"},"parametersJsonSchema":{"type":"object"}}]}]}`, "both set", Gemini},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := c.srv(script)
			defer s.Close()
			resp, err := http.Post(s.URL+c.path, "application/json", strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"error"`) {
				t.Errorf("status %d body %s", resp.StatusCode, body)
			}
			if err := s.Err(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Err() = %v, want %q", err, c.want)
			}
		})
	}
}

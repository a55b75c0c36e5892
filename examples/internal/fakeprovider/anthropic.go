package fakeprovider

import (
	"encoding/json"
	"fmt"
	"net/http"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
)

func anthropicError(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"type": "error",
		"error": map[string]any{"type": "invalid_request_error", "message": msg}})
}

// Anthropic starts a fake Messages API; use URL as the client's base URL.
func Anthropic(script Script) *Server {
	return start(script, (*Server).anthropic, anthropicError)
}

func (s *Server) anthropic(w http.ResponseWriter, r *http.Request) error {
	if r.URL.Path != "/v1/messages" {
		return fmt.Errorf("path %s: want /v1/messages", r.URL.Path)
	}
	var raw json.RawMessage
	if err := decode(r, &raw); err != nil {
		return err
	}
	var params ant.MessageNewParams
	if err := json.Unmarshal(raw, &params); err != nil {
		return fmt.Errorf("request is no MessageNewParams: %w", err)
	}
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return err
	}
	declared := map[string]json.RawMessage{}
	for _, t := range req.Tools {
		if t.InputSchema == nil {
			return fmt.Errorf("tool %q: input_schema: field required", t.Name)
		}
		declared[t.Name] = t.InputSchema
	}
	if err := s.checkTools(declared); err != nil {
		return err
	}
	results := map[string]string{}
	for _, m := range req.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			IsError   bool            `json:"is_error"`
			Content   json.RawMessage `json:"content"`
		}
		if m.Role != "user" || json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				text := textOf(b.Content)
				if b.IsError {
					text = "error: " + text
				}
				results[b.ToolUseID] = text
			}
		}
	}
	var content []any
	stop := "tool_use"
	if len(results) == 0 {
		content = append(content, map[string]any{"type": "text", "text": "Let me use the tools."})
		for i, c := range s.script.Calls {
			content = append(content, map[string]any{"type": "tool_use", "id": callID("toolu_", i), "name": c.Name, "input": c.Args})
		}
	} else {
		text, err := s.final("toolu_", results)
		if err != nil {
			return err
		}
		content, stop = []any{map[string]any{"type": "text", "text": text}}, "end_turn"
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": req.Model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 1, "output_tokens": 1},
	})
	return nil
}

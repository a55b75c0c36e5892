package fakeprovider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

func openAIError(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
		"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}})
}

// OpenAIChat starts a fake Chat Completions API; use URL+"/v1" as the
// client's base URL.
func OpenAIChat(script Script) *Server {
	return start(script, (*Server).chat, openAIError)
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) error {
	if r.URL.Path != "/v1/chat/completions" {
		return fmt.Errorf("path %s: want /v1/chat/completions", r.URL.Path)
	}
	var raw json.RawMessage
	if err := decode(r, &raw); err != nil {
		return err
	}
	var params oai.ChatCompletionNewParams
	if err := json.Unmarshal(raw, &params); err != nil {
		return fmt.Errorf("request is no ChatCompletionNewParams: %w", err)
	}
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
		} `json:"messages"`
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return err
	}
	declared := map[string]json.RawMessage{}
	for _, t := range req.Tools {
		if t.Type == "function" {
			declared[t.Function.Name] = t.Function.Parameters
		}
	}
	if err := s.checkTools(declared); err != nil {
		return err
	}
	results := map[string]string{}
	for _, m := range req.Messages {
		if m.Role == "tool" {
			results[m.ToolCallID] = textOf(m.Content)
		}
	}
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	finish := "tool_calls"
	if len(results) == 0 {
		var calls []any
		for i, c := range s.script.Calls {
			args, _ := json.Marshal(c.Args)
			calls = append(calls, map[string]any{"id": callID("call_", i), "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": string(args)}})
		}
		msg["tool_calls"] = calls
	} else {
		text, err := s.final("call_", results)
		if err != nil {
			return err
		}
		msg["content"], finish = text, "stop"
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "created": 1, "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
		"usage":   map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
	})
	return nil
}

// OpenAIResponses starts a fake Responses API; use URL+"/v1" as the
// client's base URL.
func OpenAIResponses(script Script) *Server {
	return start(script, (*Server).responses, openAIError)
}

func (s *Server) responses(w http.ResponseWriter, r *http.Request) error {
	if r.URL.Path != "/v1/responses" {
		return fmt.Errorf("path %s: want /v1/responses", r.URL.Path)
	}
	var raw json.RawMessage
	if err := decode(r, &raw); err != nil {
		return err
	}
	var params responses.ResponseNewParams
	if err := json.Unmarshal(raw, &params); err != nil {
		return fmt.Errorf("request is no ResponseNewParams: %w", err)
	}
	var req struct {
		Model string `json:"model"`
		Input json.RawMessage
		Tools []struct {
			Type       string          `json:"type"`
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return err
	}
	declared := map[string]json.RawMessage{}
	for _, t := range req.Tools {
		if t.Type == "function" {
			declared[t.Name] = t.Parameters
		}
	}
	if err := s.checkTools(declared); err != nil {
		return err
	}
	var items []struct {
		Type   string          `json:"type"`
		CallID string          `json:"call_id"`
		Output json.RawMessage `json:"output"`
	}
	if len(req.Input) > 0 && bytes.TrimSpace(req.Input)[0] == '[' {
		if err := json.Unmarshal(req.Input, &items); err != nil {
			return fmt.Errorf("input: %w", err)
		}
	}
	results := map[string]string{}
	for _, it := range items {
		if it.Type == "function_call_output" {
			results[it.CallID] = textOf(it.Output)
		}
	}
	var output []any
	if len(results) == 0 {
		for i, c := range s.script.Calls {
			args, _ := json.Marshal(c.Args)
			output = append(output, map[string]any{"type": "function_call", "id": callID("fc_", i),
				"call_id": callID("call_", i), "name": c.Name, "arguments": string(args), "status": "completed"})
		}
	} else {
		text, err := s.final("call_", results)
		if err != nil {
			return err
		}
		output = []any{map[string]any{"type": "message", "id": "msg_fake", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": "resp_fake", "object": "response", "created_at": 1, "status": "completed", "model": req.Model,
		"output": output, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{},
		"usage": map[string]any{"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
			"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}},
	})
	return nil
}

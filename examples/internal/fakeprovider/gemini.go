package fakeprovider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/genai"
)

func geminiError(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
		"code": 400, "message": msg, "status": "INVALID_ARGUMENT"}})
}

// Gemini starts a fake Gemini API (generateContent); use URL as
// genai.HTTPOptions.BaseURL with the Gemini API backend.
func Gemini(script Script) *Server {
	return start(script, (*Server).gemini, geminiError)
}

func (s *Server) gemini(w http.ResponseWriter, r *http.Request) error {
	if !strings.HasPrefix(r.URL.Path, "/v1beta/models/") || !strings.HasSuffix(r.URL.Path, ":generateContent") {
		return fmt.Errorf("path %s: want /v1beta/models/MODEL:generateContent", r.URL.Path)
	}
	var req struct {
		Contents []*genai.Content `json:"contents"`
		Tools    []*genai.Tool    `json:"tools"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	declared := map[string]json.RawMessage{}
	for _, t := range req.Tools {
		for _, d := range t.FunctionDeclarations {
			if d.Parameters != nil && d.ParametersJsonSchema != nil {
				return fmt.Errorf("function %q: parameters and parametersJsonSchema are both set", d.Name)
			}
			switch {
			case d.Parameters != nil:
				declared[d.Name], _ = json.Marshal(d.Parameters)
			case d.ParametersJsonSchema != nil:
				declared[d.Name], _ = json.Marshal(d.ParametersJsonSchema)
			default:
				declared[d.Name] = nil
			}
		}
	}
	if err := s.checkTools(declared); err != nil {
		return err
	}
	results := map[string]string{}
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			fr := p.FunctionResponse
			if fr == nil {
				continue
			}
			switch {
			case fr.Response["error"] != nil:
				results[fr.ID] = fmt.Sprint("error: ", fr.Response["error"])
			case fr.Response["output"] != nil:
				results[fr.ID] = fmt.Sprint(fr.Response["output"])
			default:
				data, _ := json.Marshal(fr.Response)
				results[fr.ID] = string(data)
			}
		}
	}
	var parts []any
	if len(results) == 0 {
		for i, c := range s.script.Calls {
			parts = append(parts, map[string]any{"functionCall": map[string]any{"id": callID("fc_", i), "name": c.Name, "args": c.Args}})
		}
	} else {
		text, err := s.final("fc_", results)
		if err != nil {
			return err
		}
		parts = []any{map[string]any{"text": text}}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts},
			"finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
		"modelVersion":  "fake",
	})
	return nil
}

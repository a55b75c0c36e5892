// Package elicitation holds the types of an MCP elicitation turned into an
// agent interrupt: a server asks the user something in the middle of a tool
// call, the agent run stops with an Interrupt, and resumes with a Resume
// that answers each request by its key.
//
// The types marshal to the JSON shape of LangChain's langchain.mcp adapter:
//
//	{"type": "mcp_elicitation", "tool_name": "book_table",
//	 "requests": [{"key": "...", "mode": "form", "message": "...", "requested_schema": {...}}]}
//
//	{"responses": {"<key>": {"action": "accept", "content": {"guests": 4}}}}
//
// They are registered with encoding/gob, so they can live in agent
// checkpoints.
package elicitation

import (
	"encoding/gob"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// InterruptType is the discriminator of an elicitation interrupt payload.
const InterruptType = "mcp_elicitation"

// Mode is how a request is put to the user.
type Mode string

const (
	// ModeForm asks for values that must satisfy RequestedSchema.
	ModeForm Mode = "form"
	// ModeURL sends the user to a URL (to sign in, pay, consent, ...).
	ModeURL Mode = "url"
)

// Interrupt is the payload of an agent interrupt raised by a tool whose
// server asked the user for input.
type Interrupt struct {
	// Type is always InterruptType.
	Type string `json:"type"`
	// ToolName is the tool that is waiting, as the model knows it.
	ToolName string `json:"tool_name"`
	// Server names the server that asked.
	Server string `json:"server,omitempty"`
	// Requests are the questions, in the order to ask them.
	Requests []Request `json:"requests"`
	// Problem, when the run was resumed with answers that do not fit,
	// says what was wrong; the same questions are asked again.
	Problem string `json:"problem,omitempty"`
}

// Request is one question from the server.
type Request struct {
	// Key identifies the request; the answer goes under this key.
	Key  string `json:"key"`
	Mode Mode   `json:"mode"`
	// Message is the server's question or explanation for the user.
	Message string `json:"message"`
	// RequestedSchema is the JSON Schema the answer's content must satisfy
	// (form mode): a flat object of strings, numbers, booleans and enums.
	RequestedSchema json.RawMessage `json:"requested_schema,omitempty"`
	// URL is the address to send the user to (URL mode).
	URL string `json:"url,omitempty"`
	// ElicitationID identifies a URL-mode elicitation to the server.
	ElicitationID string `json:"elicitation_id,omitempty"`
}

// Action is the user's answer to a request.
type Action string

const (
	// Accept answers the request: with Content for a form, or after
	// visiting the URL.
	Accept Action = "accept"
	// Decline refuses this request; the tool call goes on without it.
	Decline Action = "decline"
	// Cancel abandons the whole tool call.
	Cancel Action = "cancel"
)

// Response answers one request.
type Response struct {
	Action Action `json:"action"`
	// Content holds the form's values (Accept in form mode only).
	Content map[string]any `json:"content,omitempty"`
}

// Resume is what an interrupted run resumes with: one response per request
// key.
type Resume struct {
	Responses map[string]Response `json:"responses"`
}

// GobNames are the names the types are registered under with encoding/gob
// (agent frameworks that register types themselves must use the same).
const (
	GobNameInterrupt = "mcpadapter_elicitation_interrupt"
	GobNameResume    = "mcpadapter_elicitation_resume"
)

func init() {
	gob.RegisterName(GobNameInterrupt, &Interrupt{})
	gob.RegisterName(GobNameResume, &Resume{})
	// Form values inside Content.
	gob.Register([]any{})
	gob.Register(map[string]any{})
	gob.Register(json.Number(""))
}

// Error reports an answer that does not fit its request.
type Error struct {
	// Key is the request's key.
	Key string
	// Field is the form field at fault, or "".
	Field string
	Msg   string
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("elicitation %q: field %q: %s", e.Key, e.Field, e.Msg)
	}
	return fmt.Sprintf("elicitation %q: %s", e.Key, e.Msg)
}

// Check checks resume against the requests it answers: every request has a
// response with a known action, no response answers an unknown key, and
// accepted forms satisfy their schemas. It returns the responses to send,
// with each schema's defaults filled in.
func Check(requests []Request, resume *Resume) (map[string]Response, error) {
	if resume == nil {
		return nil, &Error{Msg: "no resume data"}
	}
	out := make(map[string]Response, len(requests))
	for _, r := range requests {
		resp, ok := resume.Responses[r.Key]
		if !ok {
			return nil, &Error{Key: r.Key, Msg: "no response for this request"}
		}
		checked, err := r.Check(resp)
		if err != nil {
			return nil, err
		}
		out[r.Key] = checked
	}
	for k := range resume.Responses {
		if !slices.ContainsFunc(requests, func(r Request) bool { return r.Key == k }) {
			keys := make([]string, len(requests))
			for i, r := range requests {
				keys[i] = r.Key
			}
			return nil, &Error{Key: k, Msg: fmt.Sprintf("no such request (pending: %s)", strings.Join(keys, ", "))}
		}
	}
	return out, nil
}

// Check checks one response against the request, and returns it with the
// form's defaults filled in.
func (r Request) Check(resp Response) (Response, error) {
	switch resp.Action {
	case Decline, Cancel:
		return Response{Action: resp.Action}, nil
	case Accept:
	default:
		return Response{}, &Error{Key: r.Key, Msg: fmt.Sprintf("action %q; want accept, decline or cancel", resp.Action)}
	}
	if r.Mode == ModeURL {
		if len(resp.Content) > 0 {
			return Response{}, &Error{Key: r.Key, Msg: "a URL request takes no content"}
		}
		return Response{Action: Accept}, nil
	}
	content, err := validateForm(r.RequestedSchema, resp.Content)
	if err != nil {
		if e, ok := err.(*Error); ok {
			e.Key = r.Key
		}
		return Response{}, err
	}
	return Response{Action: Accept, Content: content}, nil
}

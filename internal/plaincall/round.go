package plaincall

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Round returns the questions and the request state of res, a
// tools/call, prompts/get or resources/read result as go-sdk decoded it,
// when it asks the client for a round of answers (a 2026-07-28
// multi-round-trip): its resultType is "input_required", or it has none
// and holds inputRequests (as a server that leaves the type out sends).
// A result of another type that holds inputRequests is not a round: a
// task the server made ("resultType": "task") shows its questions with
// it, and they are answered with tasks/update; answering them by sending
// the request again would run the tool a second time. ok is false for
// a result that asks nothing.
func Round(res mcp.Result) (reqs mcp.InputRequestMap, state string, ok bool) {
	var needs bool
	switch r := res.(type) {
	case *mcp.CallToolResult:
		reqs, state, needs = r.InputRequests, r.RequestState, r.NeedsInput()
	case *mcp.GetPromptResult:
		reqs, state, needs = r.InputRequests, r.RequestState, r.NeedsInput()
	case *mcp.ReadResourceResult:
		reqs, state, needs = r.InputRequests, r.RequestState, r.NeedsInput()
	default:
		return nil, "", false
	}
	if reqs == nil || !needs && resultType(res) != "" {
		return nil, "", false
	}
	return reqs, state, true
}

// resultType returns the resultType go-sdk decoded into res, which it
// keeps unexported and writes back when res is encoded.
func resultType(res mcp.Result) string {
	b, err := json.Marshal(res)
	if err != nil {
		return "?" // not a type go-sdk knows: no round
	}
	var t struct {
		ResultType string `json:"resultType"`
	}
	if json.Unmarshal(b, &t) != nil {
		return "?"
	}
	return t.ResultType
}

// Package anthropic gives the tools of MCP servers (mcpadapter.Tool) to
// github.com/anthropics/anthropic-sdk-go/v2: Messages API tools, each
// input schema passed through a schemaprofile profile (Anthropic by
// default), and a dispatcher that runs the tool_use blocks of one
// assistant turn in parallel and returns the tool_result blocks.
//
//	ts, err := anthropic.New(tools, nil)
//	params.Tools = ts.Tools()
//	// ... the model answers with tool_use blocks in msg ...
//	outs, err := ts.Run(ctx, anthropic.Calls(msg))
//	for _, o := range outs {
//		if o.Pending != nil { /* ask the human, then ts.Resume */ }
//	}
//	params.Messages = append(params.Messages, msg.ToParam(), anthropic.UserMessage(outs))
//
// What maps to what: a tool's text and resource content become text
// blocks of the tool_result; images (JPEG, PNG, GIF, WebP) become image
// blocks in it (other media are described in text); a tool error
// (isError) is a tool_result with is_error true carrying the server's
// text, so the model can read it and retry; a transport failure is a Go
// error from Run (a *CallError); structured content stays on
// Outcome.Result.Artifact; a server's question (elicitation, with
// mcpadapter.ElicitInterrupt) is Outcome.Pending, resumed with
// Toolset.Resume.
package anthropic

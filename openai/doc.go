// Package openai gives the tools of MCP servers (mcpadapter.Tool) to
// github.com/openai/openai-go/v3: function tools for Chat Completions and
// for Responses, each schema passed through a schemaprofile profile
// (OpenAIStrict by default: strict when that keeps the schema's meaning),
// and a dispatcher that runs the model's tool calls of one turn in
// parallel and returns the SDK's tool messages.
//
//	ts, err := openai.New(tools, nil)
//	params.Tools = ts.ChatTools()
//	// ... the model answers with tool calls in msg ...
//	outs, err := ts.Run(ctx, openai.ChatCalls(msg))
//	for _, o := range outs {
//		if o.Pending != nil { /* ask the human, then ts.Resume */ }
//		params.Messages = append(params.Messages, o.ChatMessage())
//	}
//
// What maps to what: a tool's text and resource content become the tool
// message's text; images go into Responses function_call_output as
// input_image parts (Chat Completions tool messages take text only, so
// there they are described); a tool error (isError) becomes the text
// "Error: ..." the model reads; a transport failure is a Go error from
// Run; structured content stays on Outcome.Result.Artifact; a server's
// question (elicitation, with mcpadapter.ElicitInterrupt) is
// Outcome.Pending, resumed with Toolset.Resume.
package openai

// Package langchaingo gives the tools of MCP servers (mcpadapter.Tool) to
// github.com/tmc/langchaingo in both of its shapes: as tools.Tool values
// (Name, Description, Call(ctx, string)) for its agents, and as llms.Tool
// function definitions for models with native tool calling, with a
// dispatcher that runs one turn's llms.ToolCall values in parallel and
// returns the llms.ToolCallResponse messages.
//
//	ts, err := langchaingo.New(tools, nil)
//	resp, err := model.GenerateContent(ctx, msgs, llms.WithTools(ts.Definitions()))
//	choice := resp.Choices[0]
//	msgs = append(msgs, langchaingo.AssistantMessage(choice))
//	outs, err := ts.Run(ctx, choice.ToolCalls)
//	for _, o := range outs {
//		if o.Pending != nil { /* ask the human, then ts.Resume */ }
//		msgs = append(msgs, o.Message())
//	}
//
// Schemas pass through a schemaprofile profile, schemaprofile.OpenAI by
// default: langchaingo's llms.Tool is OpenAI's function-tool shape, and
// its OpenAI, Anthropic and Google backends all take a plain JSON Schema
// object there (none sets strict). Choose schemaprofile.Gemini for the
// googleai backend with deeply nested or $ref schemas, or
// schemaprofile.OpenAIStrict to send strict function tools.
//
// What maps to what: a tool's text and resource content become the
// response's text (langchaingo tool responses are text only, so images
// and audio are described); a tool error (isError) becomes the text
// "Error: ..." the model reads; a transport failure is a Go error (from
// Run, and from Tool.Call); structured content stays on
// Outcome.Result.Artifact (Tool.CallResult for the tools.Tool shape); a
// server's question (elicitation, with
// mcpadapter.ElicitInterrupt) is Outcome.Pending, resumed with
// Toolset.Resume — langchaingo has no interrupt of its own. Tool.Call
// returns it as an error wrapping *mcpadapter.InputRequiredError, resumed
// with Tool.Resume.
package langchaingo

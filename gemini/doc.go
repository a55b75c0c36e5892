// Package gemini gives the tools of MCP servers (mcpadapter.Tool) to
// google.golang.org/genai (Gemini API and Vertex AI): function
// declarations, each input schema passed through a schemaprofile profile
// (Gemini by default), and a dispatcher that runs the function calls of
// one model turn in parallel and returns the FunctionResponse parts.
//
//	ts, err := gemini.New(tools, nil)
//	config.Tools = []*genai.Tool{ts.Tool()}
//	// ... the model answers with function calls in resp ...
//	outs, err := ts.Run(ctx, gemini.Calls(resp))
//	for _, o := range outs {
//		if o.Pending != nil { /* ask the human, then ts.Resume */ }
//	}
//	contents = append(contents, resp.Candidates[0].Content, gemini.UserContent(outs))
//
// Schemas: with the Gemini profile (the default) a declaration carries
// Parameters, a *genai.Schema: the profile's output is exactly that
// OpenAPI 3.0 subset (nullable, anyOf, enum of strings, no $ref), and
// Parameters is the field both the Gemini API and Vertex AI accept on
// every model. With the Verbatim profile the schema goes unchanged into
// ParametersJsonSchema, which takes full JSON Schema on the Gemini API
// and newer Vertex AI models.
//
// What maps to what: a tool's text and resource content become the
// FunctionResponse's {"output": text}; a tool error (isError) becomes
// {"error": text}, as Gemini documents, so the model can read it and
// retry; images (PNG, JPEG, WebP) go into the FunctionResponse's parts
// as inline data (multimodal function responses), named in the text; a
// transport failure is a Go error from Run (a *CallError); structured
// content stays on Outcome.Result.Artifact; a server's question
// (elicitation, with mcpadapter.ElicitInterrupt) is Outcome.Pending,
// resumed with Toolset.Resume.
package gemini

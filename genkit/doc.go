// Package genkit gives the tools of MCP servers (mcpadapter.Tool) to
// Firebase Genkit for Go (github.com/firebase/genkit/go) as Genkit tools.
//
//	ts, err := genkit.New(tools, nil) // this package; g is Genkit's *genkit.Genkit
//	resp, err := gk.Generate(ctx, g, ai.WithPrompt("..."), ai.WithTools(ts.Refs()...))
//	for resp.FinishReason == ai.FinishReasonInterrupted {
//		var restarts []*ai.Part
//		for _, p := range ts.Interrupts(resp) { // a server asked the user
//			answers := ask(p.Interrupt)        // the application asks the human
//			part, next, err := ts.Resume(ctx, p, answers)
//			// next != nil: the server asked again; ask, Resume(ctx, *next, ...)
//			restarts = append(restarts, part)
//		}
//		resp, err = gk.Generate(ctx, g, ai.WithMessages(resp.History()...),
//			ai.WithTools(ts.Refs()...), ai.WithToolRestarts(restarts...))
//	}
//
// The tools are Genkit's dynamic tools (ai.NewMultipartTool): nothing is
// registered, so a server's tool list may change between calls to
// Generate; build a new Toolset from the new list and pass its Refs.
// Genkit runs one turn's tool requests in parallel itself.
//
// Schemas pass through a schemaprofile profile, schemaprofile.Gemini by
// default: Genkit's own model plugin is googlegenai (Gemini), whose
// function declarations take the OpenAPI 3.0 subset; choose
// schemaprofile.OpenAI or schemaprofile.Anthropic for the compat_oai or
// anthropic plugins (Restore maps renamed properties back).
//
// What maps to what: a tool's text and resource content become the tool
// response's output (a string); images and audio go into the tool
// response's content as media parts (data URLs) the model sees; a tool
// error (isError) becomes the output "Error: ..." so the model reads it
// and may retry (a Go error from a Genkit tool ends Generate, so tool
// errors never become one); a transport failure is a Go error, which
// ends Generate with it; structured content reaches the application
// through Options.OnResult, with the whole result; a server's question
// (elicitation, with mcpadapter.ElicitInterrupt) is a Genkit tool
// interrupt (FinishReasonInterrupted), whose metadata holds the
// elicitation.Interrupt and the pending call. Toolset.Resume answers it
// and finishes the MCP call (or returns the server's next question); the
// part it returns goes to ai.WithToolRestarts, and the restarted tool
// gives the finished call's response to the model. Genkit runs a
// restarted tool through its output only, so a restarted call's images
// are described in the text instead.
//
// Genkit v1.4.0 returns from Generate at the first tool's Go error and
// leaves the goroutines of that turn's other tool requests blocked for
// good (they send on a channel nobody reads any more). A transport
// failure is such an error; where a turn may hold several tool requests,
// set mcpadapter.Options.TransportErrorsAsResults so that an unreachable
// server is a result the model reads ("Error: The ... server is
// unavailable") instead, and Options.OnResult sees Result.Failure.
package genkit

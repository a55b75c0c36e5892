// Package eino binds mcpadapter tools to the eino agent framework
// (github.com/cloudwego/eino): the Go counterpart of passing an MCP
// adapter's tools to LangChain's create_agent.
//
// Tools turns []*mcpadapter.Tool into eino tools; NewAgent builds an ADK
// ChatModelAgent and Runner around them with a checkpoint store, so that a
// server's questions (elicitation, see mcpadapter.Options.Elicitation) become
// agent interrupts that the application answers and resumes.
//
// NormalizeSchema and ToolParams turn an MCP tool's input JSON Schema into
// the parameters of an eino schema.ToolInfo without losing keywords: draft-04
// and draft-07 constructs are rewritten into the 2020-12 dialect that
// eino's jsonschema.Schema models, and keywords it has no field for (x-*
// vendor keys, unevaluatedProperties, ...) are kept in Schema.Extras so that
// they reach the model.
package eino

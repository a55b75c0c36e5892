// Package einotool binds mcpadapter tools to the eino agent framework
// (github.com/cloudwego/eino).
//
// NormalizeSchema and ToolParams turn an MCP tool's input JSON Schema into
// the parameters of an eino schema.ToolInfo without losing keywords: draft-04
// and draft-07 constructs are rewritten into the 2020-12 dialect that
// eino's jsonschema.Schema models, and keywords it has no field for (x-*
// vendor keys, unevaluatedProperties, ...) are kept in Schema.Extras so that
// they reach the model.
package einotool

// Package schemaprofile rewrites an MCP tool's input schema into what one
// model provider accepts, and lists every change it made (the losses),
// each with its rule and the JSON Pointer of the value in the input.
// It needs nothing but the standard library; the provider bindings (the
// openai, anthropic and genai modules) apply it to every tool.
//
//	r, err := schemaprofile.Apply(schemaprofile.OpenAIStrict, tool.InputSchema)
//	// r.Schema: send it; r.Strict, r.NotStrict: strict or why not;
//	// r.Changes: what changed; r.Restore(args): arguments back for the server.
//
// Object key order is kept (models read properties in order).
//
// # Profiles
//
// Verbatim: the schema byte for byte.
//
// OpenAI (function tools, strict false): the root becomes {"type":"object"}
// with properties (root-object); anyOf/oneOf at the root give their
// properties as optional root properties and the argument sets go into the
// description, allOf at the root is merged, not/if/then/else/enum/const at
// the root go into the description (root-combinator); an array without
// items gets "items":{} (array-items). Everything else is sent as is.
//
// OpenAIStrict (function tools, strict true), after OpenAI's published
// Structured Outputs rules: $refs are inlined (ref-inlined); every
// property is required and each optional one is made nullable, null
// standing for "absent" — Restore removes those nulls before the call
// (optional-nullable); every object gets additionalProperties false
// (additional-properties-false); default, examples and formats strict
// mode lacks go into the description (keyword-to-description);
// annotations and unknown keywords are dropped (keyword-dropped). When
// that cannot keep the meaning — a keyword strict mode lacks that
// constrains values (minLength, maxLength, uniqueItems, patternProperties,
// allOf, oneOf, not, if, a map-like additionalProperties, an untyped
// schema, an object without properties below the root, a recursive $ref,
// more than 10 levels, 5000 properties or 1000 enum values) — the result
// is the OpenAI profile's, Strict is false, NotStrict says why and the
// Changes carry one not-strict entry per reason.
//
// Anthropic (Messages tools, input_schema): as OpenAI at the root
// (root-object, root-combinator); property names outside
// ^[a-zA-Z0-9_.-]{1,64}$ are renamed (property-renamed; $refs inlined
// first when that happens; $defs that nothing refers to and that hold
// such names are dropped, keyword-dropped) and Restore maps them back.
//
// Gemini (function declarations, genai.Schema, an OpenAPI 3.0 subset):
// $ref/$defs inlined (ref-inlined), a recursive $ref expanded at most 3
// times and then cut to an object described as recursive
// (recursion-cut); oneOf sent as anyOf (oneOf-as-anyOf); allOf merged
// (allOf-merged); a type list becomes nullable or anyOf (type-list); an
// enum of non-strings or on a non-string type, and a non-string const, go
// into the description; a string const becomes a one-value enum
// (enum-to-description); validation keywords genai.Schema lacks
// (exclusiveMinimum, multipleOf, uniqueItems, patternProperties,
// additionalProperties, not, if, ...) and formats Gemini lacks for the
// type go into the description (keyword-to-description); annotations and
// unknown keywords are dropped (keyword-dropped); required names without
// a property are dropped (required-undefined); an untyped schema with
// properties is an object, with items an array, otherwise anyOf string,
// number, boolean, object, array of strings (untyped); an array without
// items gets the untyped items (array-items); true/false subschemas are
// written as objects (bool-schema). Type names stay lower-case; the
// genai binding upper-cases them.
//
// Every profile bounds its work: JSON nested deeper than 256 is an
// error, and inlining stops at 20000 schema nodes (truncated).
package schemaprofile

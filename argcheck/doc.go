// Package argcheck checks a tool call's arguments against the tool's input
// schema before the call is sent, so that a model's invalid arguments never
// reach the server and the model learns, in one message, which argument is
// wrong and what was expected.
//
//	s, err := argcheck.Compile(tool.InputSchema) // once per schema
//	if err := s.Validate(args); err != nil {
//		var e *argcheck.Error // e.Problems: each by JSON path
//	}
//
// It reads JSON Schema 2020-12 and draft-07 (and the draft-04/06 forms
// servers still send: boolean exclusiveMinimum/exclusiveMaximum, items as
// an array with additionalItems, dependencies, definitions), chosen by the
// root's $schema; without one, 2020-12, still reading an items array as a
// tuple. Asserted: type, enum, const, multipleOf, minimum, maximum,
// exclusiveMinimum, exclusiveMaximum, minLength, maxLength, pattern,
// minItems, maxItems, uniqueItems, contains, minContains, maxContains,
// prefixItems, items, additionalItems, minProperties, maxProperties,
// required, properties, patternProperties, additionalProperties,
// propertyNames, dependentRequired, dependentSchemas, dependencies, allOf,
// anyOf, oneOf, not, if/then/else, $ref (local pointers, $id and $anchor
// within the document), and boolean schemas.
//
// The checker errs toward letting a call through: format is an
// annotation (as 2020-12 says by default), and a keyword it cannot apply
// — a pattern Go's regexp cannot compile (lookaround, backreferences), a
// $ref to another document, $dynamicRef, unevaluatedProperties and
// unevaluatedItems — accepts every value. A schema is never the reason a
// valid call is refused.
//
// A compiled Schema is immutable and safe for concurrent use. It needs
// nothing but the standard library.
package argcheck

package schemaprofile

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// A Profile names the rules of one model provider.
type Profile string

// The profiles. Each one's changes are listed in the package doc.
const (
	// Verbatim passes the schema through unchanged (it must be JSON).
	Verbatim Profile = "verbatim"
	// OpenAI is for OpenAI function tools with strict false.
	OpenAI Profile = "openai"
	// OpenAIStrict is for OpenAI function tools with strict true; it
	// falls back to the OpenAI profile when strictness would change the
	// schema's meaning (Result.Strict false, Result.NotStrict says why).
	OpenAIStrict Profile = "openai-strict"
	// Anthropic is for Anthropic Messages tools (input_schema).
	Anthropic Profile = "anthropic"
	// Gemini is for Gemini function declarations (the OpenAPI 3.0
	// subset of genai.Schema).
	Gemini Profile = "gemini"
	// AnthropicStrict is for Anthropic tools with strict true (strict
	// tool use); it falls back to the Anthropic profile when the schema
	// cannot be strict (Result.Strict false, Result.NotStrict says why).
	AnthropicStrict Profile = "anthropic-strict"
)

// Profiles lists every profile, Verbatim first.
func Profiles() []Profile {
	return []Profile{Verbatim, OpenAI, OpenAIStrict, Anthropic, AnthropicStrict, Gemini}
}

// Rules of the changes a profile makes, as Change.Rule reports them.
const (
	RuleRootObject        = "root-object"                 // the root is made {"type":"object"}
	RuleRootCombinator    = "root-combinator"             // anyOf/oneOf/allOf/not/enum at the root flattened or moved to the description
	RuleArrayItems        = "array-items"                 // an array without items gets items
	RuleBoolSchema        = "bool-schema"                 // a true/false subschema written as an object
	RuleRefInlined        = "ref-inlined"                 // a $ref replaced by what it points at
	RuleRecursionCut      = "recursion-cut"               // a recursive $ref cut at the depth bound
	RuleOptionalNullable  = "optional-nullable"           // an optional property made required and nullable
	RuleAdditionalFalse   = "additional-properties-false" // additionalProperties set to false
	RuleToDescription     = "keyword-to-description"      // a keyword the provider lacks, written into the description
	RuleDropped           = "keyword-dropped"             // an annotation or unknown keyword removed
	RuleOneOfAsAnyOf      = "oneOf-as-anyOf"              // oneOf sent as anyOf
	RuleAllOfMerged       = "allOf-merged"                // allOf merged into one schema
	RuleTypeList          = "type-list"                   // a list of types written as nullable or anyOf
	RuleUntyped           = "untyped"                     // a schema without a type given the types it allows
	RuleEnumToDescription = "enum-to-description"         // a non-string enum or const written into the description
	RuleRequiredUndefined = "required-undefined"          // a required name with no property removed
	RulePropertyRenamed   = "property-renamed"            // a property name the provider rejects, renamed (Restore maps it back)
	RuleNotStrict         = "not-strict"                  // why a schema stays non-strict (OpenAIStrict)
	RuleTruncated         = "truncated"                   // the schema exceeded a size bound and was cut
)

// A Change is one thing a profile changed: the loss to report.
type Change struct {
	// Rule is one of the Rule constants.
	Rule string `json:"rule"`
	// Path is the JSON Pointer of the value in the input schema ("" is
	// the root). Inside an inlined $ref it is the path of the definition.
	Path string `json:"path"`
	// Detail says what was changed, for people.
	Detail string `json:"detail,omitempty"`
}

func (c Change) String() string {
	p := c.Path
	if p == "" {
		p = "(root)"
	}
	if c.Detail == "" {
		return c.Rule + " at " + p
	}
	return c.Rule + " at " + p + ": " + c.Detail
}

// A Result is a schema transformed by a profile.
type Result struct {
	// Profile is the profile that made it.
	Profile Profile
	// Schema is the transformed schema (compact JSON).
	Schema json.RawMessage
	// Strict is true when the schema is strict (OpenAIStrict and
	// AnthropicStrict only).
	Strict bool
	// NotStrict says why a strict profile fell back to non-strict.
	NotStrict string
	// Optional and Unions count, in a strict AnthropicStrict schema, the
	// optional properties and the properties with a union type (anyOf or
	// a type list): Anthropic bounds both across all the strict tools of
	// one request (AnthropicMaxOptional, AnthropicMaxUnions).
	Optional, Unions int
	// Changes lists every change, in schema order.
	Changes []Change

	// names, when set, gives renamed properties their names back before
	// args applies (AnthropicStrict).
	names *argMap
	args  *argMap
}

// Changed reports whether the profile changed anything.
func (r *Result) Changed() bool { return len(r.Changes) > 0 }

// An Error reports a schema a profile cannot read.
type Error struct {
	Profile Profile
	// Path is the JSON Pointer of the bad value ("" is the root).
	Path   string
	Reason string
	Err    error
}

func (e *Error) Error() string {
	where := e.Path
	if where == "" {
		where = "(root)"
	}
	msg := "schemaprofile: " + string(e.Profile) + ": input schema " + where + ": " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Apply transforms schema (a JSON Schema, as an MCP tool's inputSchema)
// by profile p. The input is not modified.
func Apply(p Profile, schema json.RawMessage) (*Result, error) {
	root, err := decode(schema)
	if err != nil {
		return nil, &Error{Profile: p, Reason: "not JSON", Err: err}
	}
	t := &transform{profile: p}
	var out any
	switch p {
	case Verbatim:
		return &Result{Profile: p, Schema: append(json.RawMessage(nil), schema...)}, nil
	case OpenAI:
		out = t.openAI(root)
	case OpenAIStrict:
		return applyStrict(root)
	case AnthropicStrict:
		return applyAnthropicStrict(root)
	case Anthropic:
		out = t.anthropic(root)
	case Gemini:
		out = t.gemini(root)
	default:
		return nil, &Error{Profile: p, Reason: fmt.Sprintf("unknown profile %q (want one of %v)", p, Profiles())}
	}
	t.args.compileAlts(map[*argMap]bool{})
	return &Result{Profile: p, Schema: encode(out), Changes: t.changes, args: t.args}, nil
}

// transform holds the state of one Apply.
type transform struct {
	profile Profile
	changes []Change
	args    *argMap
	nodes   int // schema nodes written, against maxNodes
	// truncated is set once the schema was cut at maxNodes.
	truncated bool
	// refs, when set, renames inside definitions instead of inlining
	// (the Anthropic profiles).
	refs *refRenames
}

// maxNodes bounds the schema nodes a profile writes (inlining $refs can
// grow a schema exponentially).
const maxNodes = 20000

func (t *transform) note(rule, path, format string, args ...any) {
	t.changes = append(t.changes, Change{Rule: rule, Path: path, Detail: fmt.Sprintf(format, args...)})
}

// addDescription appends a sentence to o's description.
func addDescription(o *object, s string) {
	d, _ := o.Str("description")
	d = strings.TrimSpace(d)
	if d != "" && !strings.HasSuffix(d, ".") {
		d += "."
	}
	if d != "" {
		d += " "
	}
	o.Set("description", d+s)
}

// short cuts s to n bytes on a rune boundary.
func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// asObject returns v as a schema object: a true or missing schema is {},
// false is {"not":{}}; ok is false for a value that is no schema.
func asObject(v any) (*object, bool) {
	switch v := v.(type) {
	case *object:
		return v, true
	case bool:
		o := newObject()
		if !v {
			o.Set("not", newObject())
		}
		return o, true
	}
	return nil, false
}

// rootObject makes the root an object schema, as every provider wants:
// a root that is not an object schema becomes {"type":"object"}.
func (t *transform) rootObject(root any) *object {
	o, ok := root.(*object)
	if !ok {
		t.note(RuleRootObject, "", "the root was %s, not a schema object", short(text(root), 60))
		o = newObject()
	} else {
		o = o.Clone()
	}
	if ty, has := o.Get("type"); !has || ty != "object" {
		if has {
			t.note(RuleRootObject, "", "root type %s replaced by object", short(text(ty), 60))
		} else {
			t.note(RuleRootObject, "", "type object added")
		}
		o.Set("type", "object")
	}
	if !o.Has("properties") {
		o.Set("properties", newObject())
	} else if _, ok := o.Obj("properties"); !ok {
		t.note(RuleRootObject, "/properties", "properties was not an object")
		o.Set("properties", newObject())
	}
	return o
}

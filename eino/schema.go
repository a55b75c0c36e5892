package eino

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"
)

// maxSchemaDepth bounds the nesting of subschemas.
const maxSchemaDepth = 512

// A SchemaError reports an input schema that eino's jsonschema.Schema
// cannot represent.
type SchemaError struct {
	// Path is the JSON Pointer, in the input schema, of the value that
	// failed; "" is the whole schema.
	Path string
	// Reason says what is wrong.
	Reason string
	// Err is the underlying error, if any.
	Err error
}

func (e *SchemaError) Error() string {
	where := "the schema"
	if e.Path != "" {
		where = e.Path
	}
	msg := "eino: input schema: " + where + ": " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *SchemaError) Unwrap() error { return e.Err }

// kind is how eino's jsonschema.Schema holds a keyword.
type kind int

const (
	kString       kind = iota + 1 // string field
	kBool                         // bool field
	kNumber                       // json.Number field
	kUint                         // *uint64 field
	kType                         // "type": string or []string
	kAny                          // any field (const, default)
	kAnyArray                     // []any field (enum, examples)
	kStringArray                  // []string field (required)
	kStringArrays                 // map[string][]string field (dependentRequired)
	kSchema                       // *Schema field
	kSchemaArray                  // []*Schema field
	kSchemaMap                    // map[string]*Schema field
	kProperties                   // ordered map of *Schema (properties)
)

// einoKeywords are the keywords that jsonschema.Schema has a field for,
// spelled exactly as its JSON tags.
var einoKeywords = map[string]kind{
	"$schema": kString, "$id": kString, "$anchor": kString, "$ref": kString,
	"$dynamicRef": kString, "$comment": kString,
	"$defs": kSchemaMap,
	"allOf": kSchemaArray, "anyOf": kSchemaArray, "oneOf": kSchemaArray,
	"not": kSchema, "if": kSchema, "then": kSchema, "else": kSchema,
	"dependentSchemas": kSchemaMap,
	"prefixItems":      kSchemaArray, "items": kSchema, "contains": kSchema,
	"properties": kProperties, "patternProperties": kSchemaMap,
	"additionalProperties": kSchema, "propertyNames": kSchema,
	"type": kType, "enum": kAnyArray, "const": kAny,
	"multipleOf": kNumber, "maximum": kNumber, "exclusiveMaximum": kNumber,
	"minimum": kNumber, "exclusiveMinimum": kNumber,
	"maxLength": kUint, "minLength": kUint, "pattern": kString,
	"maxItems": kUint, "minItems": kUint, "uniqueItems": kBool,
	"maxContains": kUint, "minContains": kUint,
	"maxProperties": kUint, "minProperties": kUint,
	"required": kStringArray, "dependentRequired": kStringArrays,
	"format": kString, "contentEncoding": kString, "contentMediaType": kString,
	"contentSchema": kSchema,
	"title":         kString, "description": kString, "default": kAny,
	"deprecated": kBool, "readOnly": kBool, "writeOnly": kBool,
	"examples": kAnyArray,
}

// otherSubschemas are keywords of other dialects, or of 2020-12 that eino
// has no field for, whose values are subschemas: they are normalised too
// and then kept in Extras.
var otherSubschemas = map[string]kind{
	"definitions":           kSchemaMap,
	"additionalItems":       kSchema,
	"unevaluatedItems":      kSchema,
	"unevaluatedProperties": kSchema,
}

// oldDrafts are $schema values of the dialects NormalizeSchema rewrites.
var oldDrafts = map[string]bool{
	"http://json-schema.org/schema":                true,
	"http://json-schema.org/draft-03/schema":       true,
	"http://json-schema.org/draft-04/schema":       true,
	"http://json-schema.org/draft-06/schema":       true,
	"http://json-schema.org/draft-07/schema":       true,
	"https://json-schema.org/schema":               true,
	"https://json-schema.org/draft-03/schema":      true,
	"https://json-schema.org/draft-04/schema":      true,
	"https://json-schema.org/draft-06/schema":      true,
	"https://json-schema.org/draft-07/schema":      true,
	"https://json-schema.org/draft/2019-09/schema": true,
}

// NormalizeSchema rewrites an MCP tool's input JSON Schema into the dialect
// eino's jsonschema package represents without loss.
//
// Everywhere a subschema may appear it rewrites draft-07 "definitions" into
// "$defs" (and "#/definitions/X" references into "#/$defs/X"), tuple
// "items": [...] into "prefixItems" (with "additionalItems" becoming
// "items"), draft-04 boolean exclusiveMinimum/exclusiveMaximum into their
// numeric form, draft-07 "dependencies" into dependentSchemas and
// dependentRequired, a draft-03 to 2019-09 "$schema" into 2020-12, and
// integral counts such as "maxLength": 5.0 into integers. At the top level,
// true and {} become {"type":"object","properties":{}}, and an object
// schema lacking "type" or "properties" gets them. Unknown keywords (x-*
// vendor keys and others) and numbers are kept exactly; object keys keep
// their order except that an added "type" comes first.
//
// A schema eino cannot represent (not an object or true at the top level,
// a keyword whose value eino cannot hold, such as "maxLength": -1 or
// "type": null) gives a *SchemaError naming the path in the input.
func NormalizeSchema(raw json.RawMessage) (json.RawMessage, error) {
	root, err := normalize(raw)
	if err != nil {
		return nil, err
	}
	return encodeJSON(root), nil
}

// ToolParams returns the eino parameters for an MCP input schema:
// NormalizeSchema, then unmarshal into eino's jsonschema.Schema and wrap with
// schema.NewParamsOneOfByJSONSchema.
//
// Unmarshalling alone would drop what jsonschema.Schema has no field for and
// round numbers in enum, const, default and examples to float64, so
// ToolParams completes the result: keywords without a field, and values the
// fields would omit when marshalled (false, "", [], {} and a null const or
// default), go into the subschema's Extras; enum, const, default and
// examples hold float64 where that is exact and json.Number otherwise; every
// object subschema has a non-nil Extras so that {} stays {} rather than
// becoming true. json.Marshal of the returned schema is therefore the
// normalised schema, keyword for keyword.
func ToolParams(raw json.RawMessage) (*schema.ParamsOneOf, error) {
	root, err := normalize(raw)
	if err != nil {
		return nil, err
	}
	s, err := toEino(root)
	if err != nil {
		return nil, err
	}
	return schema.NewParamsOneOfByJSONSchema(s), nil
}

// normalize parses and normalises raw.
func normalize(raw json.RawMessage) (*object, error) {
	if len(strings.TrimSpace(string(raw))) == 0 {
		return nil, &SchemaError{Reason: "empty input"}
	}
	v, err := parseJSON(raw)
	if err != nil {
		return nil, &SchemaError{Reason: "not valid JSON", Err: err}
	}
	var root *object
	switch v := v.(type) {
	case *object:
		root = v
	case bool:
		if !v {
			return nil, &SchemaError{Reason: "the schema false accepts no arguments"}
		}
		root = newObject()
	default:
		return nil, &SchemaError{Reason: "want a JSON object or true, got " + jsonType(v)}
	}
	n := &normalizer{renames: map[*object]map[string]string{}, resources: map[string]*object{}}
	base := &url.URL{}
	if id, ok := root.Vals["$id"].(string); ok && !strings.HasPrefix(id, "#") {
		if u, err := url.Parse(id); err == nil {
			base = u
		}
	}
	n.resources[withoutFragment(base)] = root
	if err := n.schemaNode(root, "", 0, root, base); err != nil {
		return nil, err
	}
	for _, r := range n.refs {
		r.node.Vals["$ref"] = n.rewriteRef(r.node.Vals["$ref"].(string), r.resource, r.base)
	}
	if _, ok := root.Vals["type"]; !ok && objectLike(root) {
		root.SetFront("type", "object")
	}
	if root.Vals["type"] == "object" && !root.Has("properties") {
		props := newObject()
		// after "type", so that {} reads {"type":"object","properties":{}}
		root.Set("properties", props)
		for i, k := range root.Keys {
			if k == "type" && i+1 < len(root.Keys) {
				copy(root.Keys[i+2:], root.Keys[i+1:len(root.Keys)-1])
				root.Keys[i+1] = "properties"
				break
			}
		}
	}
	return root, nil
}

// nonObjectKeywords apply only to instances that are not objects: a
// top-level schema without "type" that has none of them describes objects.
var nonObjectKeywords = []string{
	"items", "prefixItems", "additionalItems", "contains", "minItems", "maxItems",
	"uniqueItems", "minContains", "maxContains", "unevaluatedItems",
	"minLength", "maxLength", "pattern", "format", "contentEncoding", "contentMediaType", "contentSchema",
	"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
	"enum", "const",
}

func objectLike(o *object) bool {
	for _, k := range nonObjectKeywords {
		if o.Has(k) {
			return false
		}
	}
	return true
}

type normalizer struct {
	// renames records, per normalised schema object, the keywords that
	// were renamed: old keyword -> new keyword, and for "dependencies"
	// "dependencies\x00name" -> "dependentSchemas" or "dependentRequired".
	renames map[*object]map[string]string
	// resources maps the absolute URI (without fragment) of each schema
	// resource ($id) to its root object; the document root is under its
	// $id or "".
	resources map[string]*object
	refs      []refSite
}

type refSite struct {
	node     *object
	resource *object
	base     *url.URL
}

func (n *normalizer) rename(o *object, old, nu string) {
	if n.renames[o] == nil {
		n.renames[o] = map[string]string{}
	}
	n.renames[o][old] = nu
}

// subschema normalises a value in a subschema position. required says
// that eino needs a schema there; otherwise a value that is not a schema is
// left alone.
func (n *normalizer) subschema(v any, path string, depth int, resource *object, base *url.URL, required bool) error {
	switch v := v.(type) {
	case *object:
		return n.schemaNode(v, path, depth+1, resource, base)
	case bool:
		return nil
	}
	if required {
		return &SchemaError{Path: path, Reason: "want a schema (an object or a boolean), got " + jsonType(v)}
	}
	return nil
}

// schemaNode normalises the schema object o found at path (in the input).
func (n *normalizer) schemaNode(o *object, path string, depth int, resource *object, base *url.URL) error {
	if depth > maxSchemaDepth {
		return &SchemaError{Path: path, Reason: fmt.Sprintf("subschemas nested deeper than %d levels", maxSchemaDepth)}
	}
	// A non-fragment $id starts a new schema resource.
	if id, ok := o.Vals["$id"].(string); ok && id != "" && !strings.HasPrefix(id, "#") {
		if u, err := url.Parse(id); err == nil {
			base = base.ResolveReference(u)
			resource = o
			if _, dup := n.resources[withoutFragment(base)]; !dup {
				n.resources[withoutFragment(base)] = o
			}
		}
	}
	if s, ok := o.Vals["$schema"].(string); ok && oldDrafts[strings.TrimSuffix(s, "#")] {
		o.Vals["$schema"] = jsonschema.Version
	}
	exclusiveBound(o, "exclusiveMinimum", "minimum")
	exclusiveBound(o, "exclusiveMaximum", "maximum")

	_, tuple := o.Vals["items"].([]any)
	// Subschemas first, at their input paths.
	for _, k := range o.Keys {
		if err := n.keyword(o, k, path, depth, resource, base, tuple); err != nil {
			return err
		}
	}
	if ref, ok := o.Vals["$ref"].(string); ok && ref != "" {
		n.refs = append(n.refs, refSite{node: o, resource: resource, base: base})
	}

	// Then the rewrites of this object's own keywords.
	if err := n.definitions(o, path); err != nil {
		return err
	}
	if tuple {
		if o.Has("prefixItems") {
			return &SchemaError{Path: path + "/items", Reason: "both an items array and prefixItems"}
		}
		o.ReplaceKey("items", "prefixItems")
		n.rename(o, "items", "prefixItems")
		if o.Has("additionalItems") {
			o.ReplaceKey("additionalItems", "items")
			n.rename(o, "additionalItems", "items")
		}
	}
	return n.dependencies(o, path)
}

// keyword normalises the subschemas under keyword k of o, and checks the
// value of a keyword eino reads. tuple says o has an items array.
func (n *normalizer) keyword(o *object, k, path string, depth int, resource *object, base *url.URL, tuple bool) error {
	v := o.Vals[k]
	kpath := path + "/" + pointerToken(k)
	kd, eino := einoKeywords[k]
	if !eino {
		kd = otherSubschemas[k]
	}
	required := eino || k == "definitions" || (k == "additionalItems" && tuple)
	switch {
	case k == "items" && tuple:
		for i, e := range v.([]any) {
			if err := n.subschema(e, kpath+"/"+strconv.Itoa(i), depth, resource, base, true); err != nil {
				return err
			}
		}
	case k == "dependencies":
		deps, ok := v.(*object)
		if !ok {
			return &SchemaError{Path: kpath, Reason: "want an object, got " + jsonType(v)}
		}
		for _, name := range deps.Keys {
			dpath := kpath + "/" + pointerToken(name)
			if _, isArray := deps.Vals[name].([]any); isArray {
				if err := checkValue(deps.Vals[name], kStringArray, dpath); err != nil {
					return err
				}
				continue
			}
			if err := n.subschema(deps.Vals[name], dpath, depth, resource, base, true); err != nil {
				return err
			}
		}
	case kd == kSchema:
		if err := n.subschema(v, kpath, depth, resource, base, required); err != nil {
			return err
		}
	case kd == kSchemaArray:
		a, ok := v.([]any)
		if !ok {
			return &SchemaError{Path: kpath, Reason: "want an array of schemas, got " + jsonType(v)}
		}
		for i, e := range a {
			if err := n.subschema(e, kpath+"/"+strconv.Itoa(i), depth, resource, base, true); err != nil {
				return err
			}
		}
	case kd == kSchemaMap || kd == kProperties:
		m, ok := v.(*object)
		if !ok {
			if !required {
				return nil
			}
			return &SchemaError{Path: kpath, Reason: "want an object of schemas, got " + jsonType(v)}
		}
		for _, name := range m.Keys {
			if err := n.subschema(m.Vals[name], kpath+"/"+pointerToken(name), depth, resource, base, true); err != nil {
				return err
			}
		}
	case eino:
		if err := checkValue(v, kd, kpath); err != nil {
			return err
		}
		if kd == kUint {
			o.Vals[k], _ = asUint(v) // checked: an integral number
		}
	}
	return nil
}

// exclusiveBound rewrites a draft-04 boolean exclusive bound.
func exclusiveBound(o *object, excl, bound string) {
	b, ok := o.Vals[excl].(bool)
	if !ok {
		return
	}
	num, isNum := o.Vals[bound].(json.Number)
	if b && isNum {
		o.Vals[excl] = num
		o.Del(bound)
		return
	}
	o.Del(excl) // false, or true without a bound: no constraint
}

// definitions merges draft-07 "definitions" into "$defs".
func (n *normalizer) definitions(o *object, path string) error {
	v, ok := o.Vals["definitions"]
	if !ok {
		return nil
	}
	defs := v.(*object) // checked by schemaNode
	existing, ok := o.Vals["$defs"].(*object)
	if !ok {
		o.ReplaceKey("definitions", "$defs")
		n.rename(o, "definitions", "$defs")
		return nil
	}
	for _, name := range defs.Keys {
		if old, dup := existing.Vals[name]; dup && !equalJSON(old, defs.Vals[name]) {
			return &SchemaError{Path: path + "/definitions/" + pointerToken(name), Reason: "differs from $defs/" + pointerToken(name)}
		}
		existing.Set(name, defs.Vals[name])
	}
	o.Del("definitions")
	n.rename(o, "definitions", "$defs")
	return nil
}

// dependencies splits draft-07 "dependencies" into dependentRequired (the
// arrays) and dependentSchemas (the schemas).
func (n *normalizer) dependencies(o *object, path string) error {
	v, ok := o.Vals["dependencies"]
	if !ok {
		return nil
	}
	deps := v.(*object) // checked by schemaNode
	for _, name := range deps.Keys {
		target := "dependentSchemas"
		if _, isArray := deps.Vals[name].([]any); isArray {
			target = "dependentRequired"
		}
		m, ok := o.Vals[target].(*object)
		if !ok {
			if o.Has(target) {
				return &SchemaError{Path: path + "/" + target, Reason: "want an object, got " + jsonType(o.Vals[target])}
			}
			m = newObject()
			o.Set(target, m)
		}
		if old, dup := m.Vals[name]; dup && !equalJSON(old, deps.Vals[name]) {
			return &SchemaError{Path: path + "/dependencies/" + pointerToken(name), Reason: "differs from " + target + "/" + pointerToken(name)}
		}
		m.Set(name, deps.Vals[name])
		n.rename(o, "dependencies\x00"+name, target)
	}
	o.Del("dependencies")
	return nil
}

// checkValue checks that v has a JSON type eino's field of kind k holds.
func checkValue(v any, k kind, path string) error {
	bad := func(want string) error {
		return &SchemaError{Path: path, Reason: "want " + want + ", got " + jsonType(v)}
	}
	switch k {
	case kString:
		if _, ok := v.(string); !ok {
			return bad("a string")
		}
	case kBool:
		if _, ok := v.(bool); !ok {
			return bad("a boolean")
		}
	case kNumber:
		if _, ok := v.(json.Number); !ok {
			return bad("a number")
		}
	case kUint:
		if _, ok := asUint(v); !ok {
			return bad("a non-negative integer below 2^64")
		}
	case kType:
		switch v := v.(type) {
		case string:
		case []any:
			for i, e := range v {
				if _, ok := e.(string); !ok {
					return checkValue(e, kString, path+"/"+strconv.Itoa(i))
				}
			}
		default:
			return bad("a string or an array of strings")
		}
	case kAnyArray:
		if _, ok := v.([]any); !ok {
			return bad("an array")
		}
	case kStringArray:
		a, ok := v.([]any)
		if !ok {
			return bad("an array of strings")
		}
		for i, e := range a {
			if err := checkValue(e, kString, path+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	case kStringArrays:
		m, ok := v.(*object)
		if !ok {
			return bad("an object of string arrays")
		}
		for _, name := range m.Keys {
			if err := checkValue(m.Vals[name], kStringArray, path+"/"+pointerToken(name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// asUint returns v as an integer json.Number if it is a non-negative
// integral number that fits in a uint64 (5, 5.0, 5e0).
func asUint(v any) (json.Number, bool) {
	num, ok := v.(json.Number)
	if !ok {
		return "", false
	}
	neg, digits, exp, ok := splitNumber(string(num))
	if !ok {
		return "", false
	}
	if digits == "" {
		return "0", true
	}
	if neg || exp < 0 || int64(len(digits))+exp > 20 {
		return "", false
	}
	s := digits + strings.Repeat("0", int(exp))
	if _, err := strconv.ParseUint(s, 10, 64); err != nil {
		return "", false
	}
	return json.Number(s), true
}

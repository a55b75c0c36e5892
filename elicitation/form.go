package elicitation

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/mail"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// formSchema is the restricted JSON Schema of an elicitation form: a flat
// object of primitive fields.
type formSchema struct {
	Type       string                  `json:"type"`
	Properties map[string]*FieldSchema `json:"properties"`
	Required   []string                `json:"required"`
}

// FieldSchema is the schema of one field of an elicitation form: the
// primitive schemas of the MCP elicitation spec, strings (with formats and
// length limits), numbers and integers (with bounds), booleans,
// single-select enums (enum, optionally with enumNames, or oneOf of
// const/title) and multi-select enums (an array whose items are an enum,
// or anyOf of const/title).
type FieldSchema struct {
	Type        string          `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Format      string          `json:"format"`
	MinLength   *int            `json:"minLength"`
	MaxLength   *int            `json:"maxLength"`
	Minimum     *float64        `json:"minimum"`
	Maximum     *float64        `json:"maximum"`
	Enum        []any           `json:"enum"`
	EnumNames   []string        `json:"enumNames"`
	OneOf       []ConstOption   `json:"oneOf"`
	AnyOf       []ConstOption   `json:"anyOf"`
	Items       *FieldSchema    `json:"items"`
	MinItems    *int            `json:"minItems"`
	MaxItems    *int            `json:"maxItems"`
	Default     json.RawMessage `json:"default"`
}

// ConstOption is one titled choice of an enum (oneOf/anyOf of const and
// title).
type ConstOption struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

// Options returns the allowed values of an enum field, or nil.
func (f *FieldSchema) Options() []any {
	if len(f.Enum) > 0 {
		return f.Enum
	}
	opts := f.OneOf
	if len(opts) == 0 {
		opts = f.AnyOf
	}
	var out []any
	for _, o := range opts {
		out = append(out, o.Const)
	}
	return out
}

// validateForm checks content against schema and returns a copy with the
// schema's defaults added for fields the user left out.
func validateForm(schema json.RawMessage, content map[string]any) (map[string]any, error) {
	var fs formSchema
	if len(bytes.TrimSpace(schema)) == 0 {
		fs.Type = "object"
	} else if err := json.Unmarshal(schema, &fs); err != nil {
		return nil, &Error{Msg: fmt.Sprintf("the server's requested_schema is not a form schema: %v", err)}
	}
	if fs.Type != "" && fs.Type != "object" {
		return nil, &Error{Msg: fmt.Sprintf("the server's requested_schema has type %q, not object", fs.Type)}
	}
	out := make(map[string]any, len(fs.Properties))
	names := make([]string, 0, len(content))
	for name := range content {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		f, ok := fs.Properties[name]
		if !ok || f == nil {
			return nil, &Error{Field: name, Msg: fmt.Sprintf("not a field of this form (fields: %s)", strings.Join(sortedKeys(fs.Properties), ", "))}
		}
		v, err := f.check(content[name])
		if err != nil {
			return nil, &Error{Field: name, Msg: err.Error()}
		}
		out[name] = v
	}
	for name, f := range fs.Properties {
		if _, given := out[name]; given || f == nil || len(f.Default) == 0 {
			continue
		}
		// A default's number is sent as exactly as it can be (number.go).
		dec := json.NewDecoder(bytes.NewReader(f.Default))
		dec.UseNumber()
		var d any
		if err := dec.Decode(&d); err != nil {
			continue
		}
		if num, ok := d.(json.Number); ok {
			n, _, err := numberOf(num)
			if err != nil {
				continue
			}
			if d, err = n.wire(); err != nil {
				continue
			}
		}
		out[name] = d
	}
	for _, name := range fs.Required {
		if _, ok := out[name]; !ok {
			return nil, &Error{Field: name, Msg: "required"}
		}
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// check validates one value and returns it in its JSON form (numbers as
// number.go says).
func (f *FieldSchema) check(v any) (any, error) {
	switch f.Type {
	case "string", "":
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("want a string, got %s", describe(v))
		}
		return s, f.checkString(s)
	case "number", "integer":
		n, ok, err := numberOf(v)
		if !ok {
			article := "a"
			if f.Type == "integer" {
				article = "an"
			}
			return nil, fmt.Errorf("want %s %s, got %s", article, f.Type, describe(v))
		}
		if err != nil {
			return nil, err
		}
		if f.Type == "integer" && !n.isInt() {
			return nil, fmt.Errorf("want an integer, got %v", n)
		}
		if f.Minimum != nil && n.cmpFloat(*f.Minimum) < 0 {
			return nil, fmt.Errorf("%v is below the minimum %v", n, *f.Minimum)
		}
		if f.Maximum != nil && n.cmpFloat(*f.Maximum) > 0 {
			return nil, fmt.Errorf("%v is above the maximum %v", n, *f.Maximum)
		}
		return n.wire()
	case "boolean":
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("want true or false, got %s", describe(v))
		}
		return b, nil
	case "array":
		return f.checkArray(v)
	default:
		return nil, fmt.Errorf("the form uses type %q, which elicitation does not allow", f.Type)
	}
}

func (f *FieldSchema) checkString(s string) error {
	n := utf8.RuneCountInString(s)
	if f.MinLength != nil && n < *f.MinLength {
		return fmt.Errorf("at least %d characters, got %d", *f.MinLength, n)
	}
	if f.MaxLength != nil && n > *f.MaxLength {
		return fmt.Errorf("at most %d characters, got %d", *f.MaxLength, n)
	}
	if opts := f.Options(); len(opts) > 0 && !slices.Contains(opts, any(s)) {
		return fmt.Errorf("%q is not one of %s", s, listOptions(opts))
	}
	switch f.Format {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return fmt.Errorf("%q is not an email address", s)
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || !u.IsAbs() {
			return fmt.Errorf("%q is not an absolute URI", s)
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return fmt.Errorf("%q is not a date (YYYY-MM-DD)", s)
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return fmt.Errorf("%q is not a date-time (RFC 3339)", s)
		}
	}
	return nil
}

func (f *FieldSchema) checkArray(v any) (any, error) {
	items, ok := v.([]any)
	if !ok {
		if ss, isStrings := v.([]string); isStrings {
			for _, s := range ss {
				items = append(items, s)
			}
			ok = true
		}
	}
	if !ok {
		return nil, fmt.Errorf("want a list of choices, got %s", describe(v))
	}
	if f.MinItems != nil && len(items) < *f.MinItems {
		return nil, fmt.Errorf("choose at least %d", *f.MinItems)
	}
	if f.MaxItems != nil && len(items) > *f.MaxItems {
		return nil, fmt.Errorf("choose at most %d", *f.MaxItems)
	}
	var opts []any
	if f.Items != nil {
		opts = f.Items.Options()
	}
	out := make([]any, len(items))
	for i, it := range items {
		s, isString := it.(string)
		if !isString {
			return nil, fmt.Errorf("choice %d: want a string, got %s", i, describe(it))
		}
		if len(opts) > 0 && !slices.Contains(opts, any(s)) {
			return nil, fmt.Errorf("choice %q is not one of %s", s, listOptions(opts))
		}
		out[i] = s
	}
	return out, nil
}

func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("the string %q", v)
	case bool:
		return fmt.Sprintf("%v", v)
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	if n, ok, err := numberOf(v); ok && err == nil {
		return fmt.Sprintf("the number %v", n)
	} else if ok {
		return fmt.Sprintf("%v", v)
	}
	return fmt.Sprintf("%T", v)
}

func listOptions(opts []any) string {
	parts := make([]string, len(opts))
	for i, o := range opts {
		parts[i] = fmt.Sprintf("%q", fmt.Sprint(o))
	}
	return strings.Join(parts, ", ")
}

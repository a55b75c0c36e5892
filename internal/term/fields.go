package term

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpadapter/mcpadapter/elicitation"
)

// field is one property of an elicitation form's requested_schema, as far
// as asking it at a terminal needs. Validation is left to
// elicitation.Request.Check.
type field struct {
	name     string
	required bool
	elicitation.FieldSchema
}

// choice is one allowed value of an enum field, with what to show for it.
type choice struct {
	value any
	label string
}

// parseForm returns the fields of a form schema in the order the schema
// writes its properties.
func parseForm(schema json.RawMessage) ([]*field, error) {
	if len(bytes.TrimSpace(schema)) == 0 || bytes.Equal(bytes.TrimSpace(schema), []byte("null")) {
		return nil, nil
	}
	var top struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil, fmt.Errorf("the requested_schema is not a form schema: %v", err)
	}
	if top.Type != "" && top.Type != "object" {
		return nil, fmt.Errorf("the requested_schema has type %q, not object", top.Type)
	}
	order, err := propertyOrder(schema)
	if err != nil {
		return nil, fmt.Errorf("the requested_schema is not a form schema: %v", err)
	}
	fields := make([]*field, 0, len(order))
	for _, name := range order {
		raw := top.Properties[name]
		f := &field{name: name, required: slices.Contains(top.Required, name)}
		if err := json.Unmarshal(raw, f); err != nil {
			return nil, fmt.Errorf("field %q: %v", name, err)
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// propertyOrder returns the keys of the schema's top-level "properties"
// object in document order, each once.
func propertyOrder(schema json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(schema))
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	var order []string
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return nil, err
		}
		if key != "properties" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
			continue
		}
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		if tok == nil { // "properties": null
			continue
		}
		if d, ok := tok.(json.Delim); !ok || d != '{' {
			return nil, errors.New("properties is not an object")
		}
		order = order[:0]
		for dec.More() {
			name, err := objectKey(dec)
			if err != nil {
				return nil, err
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
			if !slices.Contains(order, name) {
				order = append(order, name)
			}
		}
		if _, err := dec.Token(); err != nil { // '}'
			return nil, err
		}
	}
	return order, nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, got %v", want, tok)
	}
	return nil
}

func objectKey(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	key, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("want an object key, got %v", tok)
	}
	return key, nil
}

// label is what the field is called at the prompt.
func (f *field) label() string {
	if f.Title != "" {
		return cleanLine(f.Title)
	}
	return cleanLine(f.name)
}

func (f *field) multi() bool { return f.Type == "array" }

func (f *field) isBool() bool { return f.Type == "boolean" }

// choices returns the allowed values of a single-select field, or of the
// items of a multi-select one; nil when the field takes free input.
func (f *field) choices() []choice {
	src := &f.FieldSchema
	if f.multi() {
		if f.Items == nil {
			return nil
		}
		src = f.Items
	}
	if len(src.Enum) > 0 {
		out := make([]choice, len(src.Enum))
		for i, v := range src.Enum {
			out[i] = choice{value: v, label: cleanLine(fmt.Sprint(v))}
			if i < len(src.EnumNames) && src.EnumNames[i] != "" {
				out[i].label = cleanLine(src.EnumNames[i])
			}
		}
		return out
	}
	opts := src.OneOf
	if len(opts) == 0 {
		opts = src.AnyOf
	}
	out := make([]choice, 0, len(opts))
	for _, o := range opts {
		c := choice{value: o.Const, label: cleanLine(fmt.Sprint(o.Const))}
		if o.Title != "" {
			c.label = cleanLine(o.Title)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// describe is the field's kind, constraints and whether it is required,
// e.g. "integer, 1..12, required".
func (f *field) describe() string {
	var parts []string
	switch {
	case f.multi():
		parts = append(parts, "choose any, comma-separated")
		if s := bounds(intPtrFloat(f.MinItems), intPtrFloat(f.MaxItems), " choices"); s != "" {
			parts = append(parts, s)
		}
	case f.choices() != nil:
		parts = append(parts, "choose one")
	case f.isBool():
		parts = append(parts, "yes/no")
	case f.Type == "integer" || f.Type == "number":
		parts = append(parts, f.Type)
		if s := bounds(f.Minimum, f.Maximum, ""); s != "" {
			parts = append(parts, s)
		}
	default:
		switch f.Format {
		case "email":
			parts = append(parts, "email address")
		case "uri":
			parts = append(parts, "URI")
		case "date":
			parts = append(parts, "date, YYYY-MM-DD")
		case "date-time":
			parts = append(parts, "date-time, RFC 3339 like 2006-01-02T15:04:05Z")
		case "":
			parts = append(parts, "text")
		default:
			parts = append(parts, "text, "+cleanLine(f.Format))
		}
		if s := bounds(intPtrFloat(f.MinLength), intPtrFloat(f.MaxLength), " characters"); s != "" {
			parts = append(parts, s)
		}
	}
	if f.required {
		parts = append(parts, "required")
	} else {
		parts = append(parts, "optional")
	}
	return strings.Join(parts, ", ")
}

func intPtrFloat(p *int) *float64 {
	if p == nil {
		return nil
	}
	v := float64(*p)
	return &v
}

// bounds renders a range: "1..12", "at least 1", "at most 12" or "".
func bounds(lo, hi *float64, unit string) string {
	switch {
	case lo != nil && hi != nil:
		return num(*lo) + ".." + num(*hi) + unit
	case lo != nil:
		return "at least " + num(*lo) + unit
	case hi != nil:
		return "at most " + num(*hi) + unit
	}
	return ""
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// defaultText renders the field's default for the prompt, or "" when it
// has none.
func (f *field) defaultText() string {
	if len(f.Default) == 0 {
		return ""
	}
	var d any
	if err := json.Unmarshal(f.Default, &d); err != nil || d == nil {
		return ""
	}
	show := func(v any) string {
		for _, c := range f.choices() {
			if reflect.DeepEqual(c.value, v) {
				return c.label
			}
		}
		if n, ok := v.(float64); ok {
			return num(n)
		}
		return cleanLine(fmt.Sprint(v))
	}
	switch d := d.(type) {
	case bool:
		if d {
			return "y"
		}
		return "n"
	case []any:
		parts := make([]string, len(d))
		for i, v := range d {
			parts[i] = show(v)
		}
		return strings.Join(parts, ",")
	default:
		return show(d)
	}
}

// hasDefault reports whether elicitation fills in a default for the field
// when it is left out.
func (f *field) hasDefault() bool {
	if len(f.Default) == 0 {
		return false
	}
	var d any
	return json.Unmarshal(f.Default, &d) == nil
}

// prompt is the input prompt of the field, e.g. "  [y/n, default n] > ".
func (f *field) prompt() string {
	var hints []string
	if f.isBool() {
		hints = append(hints, "y/n")
	}
	if d := f.defaultText(); d != "" {
		hints = append(hints, "default "+d)
	}
	if len(hints) == 0 {
		return "  > "
	}
	return "  [" + strings.Join(hints, ", ") + "] > "
}

// parse turns a non-empty answer into the value to put in the content.
func (f *field) parse(s string) (any, error) {
	if f.multi() {
		var out []any
		for part := range strings.SplitSeq(s, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			v := any(part)
			if cs := f.choices(); cs != nil {
				var err error
				if v, err = pick(cs, part); err != nil {
					return nil, err
				}
			}
			if !slices.ContainsFunc(out, func(o any) bool { return reflect.DeepEqual(o, v) }) {
				out = append(out, v)
			}
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	}
	if cs := f.choices(); cs != nil {
		return pick(cs, s)
	}
	switch f.Type {
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true", "t", "1":
			return true, nil
		case "n", "no", "false", "f", "0":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not y or n", s)
	case "integer":
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, nil
		}
		n, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		if n != math.Trunc(n) {
			return nil, fmt.Errorf("%s is not a whole number", s)
		}
		return n, nil
	case "number":
		n, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return n, nil
	}
	return s, nil
}

// pick resolves an answer to one of the choices: by its number in the
// list first, then by value, then by value or label ignoring case.
func pick(cs []choice, s string) (any, error) {
	if i, err := strconv.Atoi(s); err == nil && i >= 1 && i <= len(cs) {
		return cs[i-1].value, nil
	}
	for _, c := range cs {
		if fmt.Sprint(c.value) == s {
			return c.value, nil
		}
	}
	var found []any
	for _, c := range cs {
		if strings.EqualFold(fmt.Sprint(c.value), s) || strings.EqualFold(c.label, s) {
			if !slices.ContainsFunc(found, func(o any) bool { return reflect.DeepEqual(o, c.value) }) {
				found = append(found, c.value)
			}
		}
	}
	if len(found) == 1 {
		return found[0], nil
	}
	return nil, fmt.Errorf("%q is not one of the choices; answer 1..%d or a value", s, len(cs))
}

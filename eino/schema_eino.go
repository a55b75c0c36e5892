package eino

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/eino-contrib/jsonschema"
)

// Conversion of a normalised schema into eino's jsonschema.Schema, keeping
// what it has no field for.

// errPanicked wraps a panic in eino's unmarshal: the caller gets a
// *SchemaError, and FuzzNormalizeSchema fails on it (a panic is a bug to
// fix, not a schema eino cannot hold).
var errPanicked = errors.New("panic")

// toEino builds the eino schema: unmarshal the keywords eino has fields
// for, then complete it from the normalised tree.
func toEino(root *object) (s *jsonschema.Schema, err error) {
	in := encodeJSON(einoView(root))
	s = &jsonschema.Schema{}
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%w: %v", errPanicked, r)
			}
		}()
		err = json.Unmarshal(in, s)
	}()
	if err != nil {
		return nil, &SchemaError{Reason: "eino's jsonschema.Schema rejects the normalised schema", Err: err}
	}
	if err := complete(s, root, ""); err != nil {
		return nil, err
	}
	return s, nil
}

// einoView returns the part of schema object o that goes through eino's
// unmarshal: the keywords it has fields for, exactly spelled (encoding/json
// would also match "Title" to title), except those complete sets itself.
func einoView(o *object) *object {
	out := newObject()
	for _, k := range o.Keys {
		v := o.Vals[k]
		kd, ok := einoKeywords[k]
		if !ok || kd == kAny || kd == kAnyArray || dropped(kd, v) {
			continue
		}
		out.Set(k, einoSubView(kd, v))
	}
	return out
}

func einoSubView(kd kind, v any) any {
	sub := func(v any) any {
		if o, ok := v.(*object); ok {
			return einoView(o)
		}
		return v
	}
	switch kd {
	case kSchema:
		return sub(v)
	case kSchemaArray:
		a := v.([]any)
		out := make([]any, len(a))
		for i, e := range a {
			out[i] = sub(e)
		}
		return out
	case kSchemaMap, kProperties:
		m := v.(*object)
		out := newObject()
		for _, name := range m.Keys {
			out.Set(name, sub(m.Vals[name]))
		}
		return out
	}
	return v
}

// dropped reports whether eino's field of kind k would leave v out when
// marshalled (omitempty), so that v must go into Extras.
func dropped(k kind, v any) bool {
	switch k {
	case kString:
		return v == ""
	case kBool:
		return v == false
	case kAny:
		return v == nil
	case kType:
		if a, ok := v.([]any); ok {
			return len(a) == 0
		}
		return v == ""
	case kAnyArray, kStringArray, kSchemaArray:
		a, _ := v.([]any)
		return len(a) == 0
	case kStringArrays, kSchemaMap:
		m, _ := v.(*object)
		return m == nil || len(m.Keys) == 0
	}
	return false
}

// complete fills in what eino's unmarshal of einoView(o) left out of s.
func complete(s *jsonschema.Schema, o *object, path string) error {
	if s.Extras == nil {
		s.Extras = map[string]any{}
	}
	for _, k := range o.Keys {
		v := o.Vals[k]
		kpath := path + "/" + pointerToken(k)
		kd, ok := einoKeywords[k]
		if !ok || dropped(kd, v) {
			s.Extras[k] = plain(v)
			continue
		}
		switch kd {
		case kAny:
			if k == "const" {
				s.Const = plain(v)
			} else {
				s.Default = plain(v)
			}
		case kAnyArray:
			if k == "enum" {
				s.Enum = plain(v).([]any)
			} else {
				s.Examples = plain(v).([]any)
			}
		case kSchema:
			if err := completeSub(schemaField(s, k), v, kpath); err != nil {
				return err
			}
		case kSchemaArray:
			a := v.([]any)
			fa := schemaArrayField(s, k)
			if len(fa) != len(a) {
				return &SchemaError{Path: kpath, Reason: "eino's unmarshal lost subschemas"}
			}
			for i, e := range a {
				if err := completeSub(fa[i], e, kpath+"/"+strconv.Itoa(i)); err != nil {
					return err
				}
			}
		case kSchemaMap, kProperties:
			m := v.(*object)
			for _, name := range m.Keys {
				var child *jsonschema.Schema
				if kd == kProperties {
					child, _ = s.Properties.Get(name)
				} else {
					child = schemaMapField(s, k)[name]
				}
				if err := completeSub(child, m.Vals[name], kpath+"/"+pointerToken(name)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func completeSub(s *jsonschema.Schema, v any, path string) error {
	o, ok := v.(*object)
	if !ok {
		return nil // true or false
	}
	if s == nil {
		return &SchemaError{Path: path, Reason: "eino's unmarshal lost the subschema"}
	}
	return complete(s, o, path)
}

func schemaField(s *jsonschema.Schema, k string) *jsonschema.Schema {
	switch k {
	case "not":
		return s.Not
	case "if":
		return s.If
	case "then":
		return s.Then
	case "else":
		return s.Else
	case "items":
		return s.Items
	case "contains":
		return s.Contains
	case "additionalProperties":
		return s.AdditionalProperties
	case "propertyNames":
		return s.PropertyNames
	case "contentSchema":
		return s.ContentSchema
	}
	return nil
}

func schemaArrayField(s *jsonschema.Schema, k string) []*jsonschema.Schema {
	switch k {
	case "allOf":
		return s.AllOf
	case "anyOf":
		return s.AnyOf
	case "oneOf":
		return s.OneOf
	case "prefixItems":
		return s.PrefixItems
	}
	return nil
}

func schemaMapField(s *jsonschema.Schema, k string) map[string]*jsonschema.Schema {
	switch k {
	case "$defs":
		return s.Definitions
	case "patternProperties":
		return s.PatternProperties
	case "dependentSchemas":
		return s.DependentSchemas
	}
	return nil
}

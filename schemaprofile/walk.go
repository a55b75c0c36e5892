package schemaprofile

// Keywords whose values are subschemas, by shape.
var (
	// singleKeywords hold one subschema.
	singleKeywords = []string{"items", "additionalItems", "additionalProperties",
		"unevaluatedProperties", "unevaluatedItems", "propertyNames", "contains",
		"not", "if", "then", "else", "contentSchema"}
	// listKeywords hold an array of subschemas.
	listKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	// mapKeywords hold an object of subschemas.
	mapKeywords = []string{"properties", "patternProperties", "$defs", "definitions",
		"dependentSchemas", "dependencies"}
)

// eachSub calls f for every subschema of o (in place: f's result replaces
// the subschema) with its JSON Pointer. Values of the wrong shape (a
// string where a schema belongs) are passed too; f decides.
func eachSub(o *object, path string, f func(v any, path string) any) {
	for _, k := range append([]string(nil), o.Keys...) {
		v := o.Vals[k]
		if contains(singleKeywords, k) {
			if _, isList := v.([]any); !isList {
				o.Vals[k] = f(v, ptr(path, k))
				continue
			}
		}
		if contains(listKeywords, k) {
			if a, ok := v.([]any); ok {
				for i, x := range a {
					a[i] = f(x, ptr(path, k, itoa(i)))
				}
			}
			continue
		}
		if contains(mapKeywords, k) {
			if m, ok := v.(*object); ok {
				for _, name := range m.Keys {
					if k == "dependencies" {
						if _, isList := m.Vals[name].([]any); isList {
							continue
						}
					}
					m.Vals[name] = f(m.Vals[name], ptr(path, k, name))
				}
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	n := len(b)
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	return string(b[n:])
}

// types returns the type keyword of o as a list (nil when absent or not
// strings).
func types(o *object) []string {
	switch t := o.Vals["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			s, ok := x.(string)
			if !ok {
				return nil
			}
			out = append(out, s)
		}
		return out
	}
	return nil
}

func hasType(o *object, name string) bool { return contains(types(o), name) }

// acceptsNull reports whether o plainly accepts null: by its type, enum,
// const or an anyOf branch.
func acceptsNull(o *object) bool {
	if hasType(o, "null") {
		return true
	}
	if e, ok := o.Vals["enum"].([]any); ok {
		for _, x := range e {
			if x == nil {
				return true
			}
		}
	}
	if c, ok := o.Get("const"); ok && c == nil {
		return true
	}
	if a, ok := o.Vals["anyOf"].([]any); ok {
		for _, b := range a {
			if bo, ok := b.(*object); ok && acceptsNull(bo) {
				return true
			}
		}
	}
	return false
}

// isArraySchema reports whether o describes arrays (by type).
func isArraySchema(o *object) bool { return hasType(o, "array") }

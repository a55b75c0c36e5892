package argcheck

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/jsontree"
)

// normalize turns the values of encoding/json (map[string]any, float64)
// and Go numbers into the ones the checker reads.
func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		o := jsontree.New()
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sortStrings(keys)
		for _, k := range keys {
			o.Set(k, normalize(v[k]))
		}
		return o
	case *jsontree.Object:
		return v
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalize(x)
		}
		return out
	case float64:
		return json.Number(strconv.FormatFloat(v, 'g', -1, 64))
	case int:
		return json.Number(strconv.Itoa(v))
	case int64:
		return json.Number(strconv.FormatInt(v, 10))
	}
	return v
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// typeOK reports whether x is of one of types.
func typeOK(types []string, x any) bool {
	for _, t := range types {
		switch t {
		case "null":
			if x == nil {
				return true
			}
		case "boolean":
			if _, ok := x.(bool); ok {
				return true
			}
		case "string":
			if _, ok := x.(string); ok {
				return true
			}
		case "number":
			if _, ok := x.(json.Number); ok {
				return true
			}
		case "integer":
			if n, ok := x.(json.Number); ok && isInteger(n) {
				return true
			}
		case "array":
			if _, ok := x.([]any); ok {
				return true
			}
		case "object":
			if _, ok := x.(*jsontree.Object); ok {
				return true
			}
		}
	}
	return false
}

// isInteger reports whether n has no fractional part (1.0 is an integer).
func isInteger(n json.Number) bool {
	if r := rat(string(n)); r != nil {
		return r.IsInt()
	}
	f, err := n.Float64()
	return err == nil && f == math.Trunc(f)
}

// rat reads a number exactly, or nil when it is too long or its exponent
// too large to read cheaply.
func rat(s string) *big.Rat {
	if len(s) > 64 {
		return nil
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e > 400 || e < -400 {
			return nil
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil
	}
	return r
}

// less reports a < b.
func less(a, b *number) bool {
	if ra, rb := rat(a.text), rat(b.text); ra != nil && rb != nil {
		return ra.Cmp(rb) < 0
	}
	return a.f < b.f
}

// multipleOf reports whether x is a multiple of m (m > 0).
func multipleOf(x, m *number) bool {
	if rx, rm := rat(x.text), rat(m.text); rx != nil && rm != nil {
		return new(big.Rat).Quo(rx, rm).IsInt()
	}
	if math.IsInf(x.f, 0) || math.IsInf(m.f, 0) {
		return true // beyond float64: accept rather than refuse wrongly
	}
	q := x.f / m.f
	if math.IsInf(q, 0) {
		return true
	}
	return math.Abs(q-math.Round(q)) < 1e-9*math.Max(1, math.Abs(q))
}

// equal is JSON equality: numbers by value, objects regardless of order.
func equal(a, b any) bool {
	switch a := a.(type) {
	case json.Number:
		bn, ok := b.(json.Number)
		if !ok {
			return false
		}
		x, y := num(a), num(bn)
		if x == nil || y == nil {
			return a == bn
		}
		return !less(x, y) && !less(y, x)
	case []any:
		bl, ok := b.([]any)
		if !ok || len(a) != len(bl) {
			return false
		}
		for i := range a {
			if !equal(a[i], bl[i]) {
				return false
			}
		}
		return true
	case *jsontree.Object:
		bo, ok := b.(*jsontree.Object)
		if !ok || len(a.Keys) != len(bo.Keys) {
			return false
		}
		for _, k := range a.Keys {
			bv, ok := bo.Get(k)
			if !ok || !equal(a.Vals[k], bv) {
				return false
			}
		}
		return true
	}
	return a == b
}

func inList(x any, list []any) bool {
	for _, v := range list {
		if equal(x, v) {
			return true
		}
	}
	return false
}

// duplicate finds two equal items.
func duplicate(items []any) (int, int, bool) {
	for i := range items {
		for j := i + 1; j < len(items); j++ {
			if equal(items[i], items[j]) {
				return i, j, true
			}
		}
	}
	return 0, 0, false
}

// describe names a value for a message: its type and, when short, itself.
func describe(x any) string {
	switch x := x.(type) {
	case nil:
		return "null"
	case bool:
		return fmt.Sprintf("a boolean (%v)", x)
	case json.Number:
		if isInteger(x) {
			return "an integer (" + short(string(x)) + ")"
		}
		return "a number (" + short(string(x)) + ")"
	case string:
		return "a string (" + short(x2json(x)) + ")"
	case []any:
		return fmt.Sprintf("an array of %d items", len(x))
	case *jsontree.Object:
		return "an object"
	}
	return fmt.Sprintf("%T", x)
}

// typeNames writes a type list: "a string or null".
func typeNames(types []string) string {
	names := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "null":
			names[i] = "null"
		case "integer", "object", "array":
			names[i] = "an " + t
		default:
			names[i] = "a " + t
		}
	}
	return strings.Join(names, " or ")
}

// summary names what a schema accepts, briefly.
func summary(n *node) string {
	for n != nil && n.refTo != nil && n.types == nil && !n.hasConst && !n.hasEnum {
		n = n.refTo
	}
	switch {
	case n == nil:
		return "any value"
	case n.always != nil && *n.always:
		return "any value"
	case n.always != nil:
		return "nothing"
	case n.hasConst:
		return short(x2json(n.constVal))
	case n.hasEnum:
		return "one of " + enumText(n.enum)
	case len(n.types) == 1 && n.types[0] == "array" && n.items != nil && n.items.types != nil:
		return "an array of " + strings.ReplaceAll(strings.ReplaceAll(typeNames(n.items.types), "a ", ""), "an ", "") + "s"
	case len(n.types) == 1 && n.types[0] == "object" && len(n.required) > 0:
		return "an object with " + strings.Join(n.required, ", ")
	case n.types != nil:
		return typeNames(n.types)
	}
	return "the schema at " + pathOr(n.path)
}

func pathOr(p string) string {
	if p == "" {
		return "#"
	}
	return "#" + p
}

// enumText lists enum values, at most 10 of them.
func enumText(vals []any) string {
	parts := make([]string, 0, min(len(vals), 10))
	for i, v := range vals {
		if i == 10 {
			parts = append(parts, fmt.Sprintf("... (%d in all)", len(vals)))
			break
		}
		parts = append(parts, short(x2json(v)))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func x2json(v any) string { return string(jsontree.Encode(v)) }

// short cuts s to 60 bytes on a rune boundary.
func short(s string) string {
	if len(s) <= 60 {
		return s
	}
	n := 57
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "..."
}

package eino

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/jsontree"
)

// maxJSONDepth bounds the nesting of parsed JSON, as encoding/json does.
const maxJSONDepth = 10000

// object is a JSON object that keeps its keys in input order (the tree is
// shared with package schemaprofile). Values are *object, []any, string,
// json.Number, bool or nil.
type object = jsontree.Object

func newObject() *object { return jsontree.New() }

// parseJSON decodes exactly one JSON value, keeping object key order and
// numbers as json.Number. A repeated key keeps its first position and its
// last value.
func parseJSON(data []byte) (any, error) { return jsontree.Parse(data, maxJSONDepth) }

// encodeJSON writes v compactly, objects in key order, numbers verbatim.
func encodeJSON(v any) []byte { return jsontree.Encode(v) }

// plain converts a parsed value into what encoding/json itself would
// produce (map[string]any, []any, float64, ...), except that a number that
// float64 cannot carry exactly stays a json.Number.
func plain(v any) any {
	switch v := v.(type) {
	case *object:
		m := make(map[string]any, len(v.Keys))
		for _, k := range v.Keys {
			m[k] = plain(v.Vals[k])
		}
		return m
	case []any:
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = plain(e)
		}
		return a
	case json.Number:
		if f, ok := exactFloat(v); ok {
			return f
		}
		return v
	default:
		return v
	}
}

// exactFloat returns n as a float64 if encoding/json would write that
// float64 back as the same number.
func exactFloat(n json.Number) (float64, bool) {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return 0, false
	}
	return f, canonNumber(string(n)) == canonNumber(strconv.FormatFloat(f, 'g', -1, 64))
}

// canonNumber returns a canonical text for the value of a JSON number:
// "0", or [-]digits"e"exponent with no leading or trailing zeros in digits.
// Two JSON numbers are equal iff their canonical texts are.
func canonNumber(s string) string {
	neg, digits, exp, ok := splitNumber(s)
	if !ok {
		return s
	}
	if digits == "" {
		return "0"
	}
	sign := ""
	if neg {
		sign = "-"
	}
	return sign + digits + "e" + strconv.FormatInt(exp, 10)
}

// splitNumber splits a JSON number into sign, significant digits (no
// leading or trailing zeros, "" for zero) and exponent, so that its value is
// digits × 10^exp. ok is false for text that is not a JSON number or whose
// exponent does not fit comfortably in an int64.
func splitNumber(s string) (neg bool, digits string, exp int64, ok bool) {
	if strings.HasPrefix(s, "-") {
		neg = true
		s = s[1:]
	}
	mant, e := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, e = s[:i], s[i+1:]
	}
	intPart, frac := mant, ""
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	if intPart == "" || !allDigits(intPart) || !allDigits(frac) || (strings.Contains(mant, ".") && frac == "") {
		return false, "", 0, false
	}
	if e != "" {
		es := strings.TrimLeft(e, "+-")
		if es == "" || !allDigits(es) || len(e)-len(es) > 1 {
			return false, "", 0, false
		}
		es = strings.TrimLeft(es, "0")
		if len(es) > 15 {
			return false, "", 0, false
		}
		if es != "" {
			exp, _ = strconv.ParseInt(es, 10, 64)
		}
		if e[0] == '-' {
			exp = -exp
		}
	}
	all := intPart + frac
	exp -= int64(len(frac))
	trimmed := strings.TrimRight(all, "0")
	exp += int64(len(all) - len(trimmed))
	digits = strings.TrimLeft(trimmed, "0")
	if digits == "" {
		return neg, "", 0, true
	}
	return neg, digits, exp, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// equalJSON reports whether two parsed JSON values are equal: objects by
// key set (any order), arrays element-wise, numbers by value.
func equalJSON(a, b any) bool {
	switch a := a.(type) {
	case *object:
		b, ok := b.(*object)
		if !ok || len(a.Vals) != len(b.Vals) {
			return false
		}
		for k, av := range a.Vals {
			bv, ok := b.Vals[k]
			if !ok || !equalJSON(av, bv) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equalJSON(a[i], b[i]) {
				return false
			}
		}
		return true
	case json.Number:
		b, ok := b.(json.Number)
		return ok && canonNumber(string(a)) == canonNumber(string(b))
	default:
		return a == b
	}
}

// jsonType names the JSON type of a parsed value for error messages.
func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		return "the number " + string(v)
	case string:
		return "a string"
	case []any:
		return "an array"
	case *object:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// pointerToken escapes a JSON Pointer reference token (RFC 6901).
func pointerToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

package elicitation

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// A form answer's number keeps its value or is refused: an integer is
// sent as an int64 (or a uint64 above that), any other number as the
// float64 whose JSON is the same number. A number neither holds exactly
// (an integer beyond 2^64, a decimal with more digits than a float64
// keeps) is refused, as are NaN and infinities, which JSON lacks. (The
// answer cannot be a json.Number: go-sdk checks a handshake-era answer
// against the form by the Go type of each value, and takes a json.Number
// for a string.)

// numberValue is a form answer's number, exactly.
type numberValue struct {
	rat *big.Rat
	// given is the number as the caller gave it, when that is a
	// json.Number or a value beyond float64 precision; "" otherwise.
	given json.Number
	f     float64 // the value as a float64 when exact, else the nearest
	exact bool    // f is exact
}

// numberOf reads v as a number. ok is false for a value that is not a
// number; err is set for one that is not a finite JSON number.
func numberOf(v any) (n numberValue, ok bool, err error) {
	switch x := v.(type) {
	case float64:
		return floatNumber(x)
	case float32:
		return floatNumber(float64(x))
	case int:
		return intNumber(int64(x)), true, nil
	case int64:
		return intNumber(x), true, nil
	case int32:
		return intNumber(int64(x)), true, nil
	case int16:
		return intNumber(int64(x)), true, nil
	case int8:
		return intNumber(int64(x)), true, nil
	case uint:
		return uintNumber(uint64(x)), true, nil
	case uint64:
		return uintNumber(x), true, nil
	case uint32:
		return uintNumber(uint64(x)), true, nil
	case uint16:
		return uintNumber(uint64(x)), true, nil
	case uint8:
		return uintNumber(uint64(x)), true, nil
	case json.Number:
		n, err := parseNumber(x)
		return n, true, err
	}
	return numberValue{}, false, nil
}

func floatNumber(f float64) (numberValue, bool, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return numberValue{}, true, fmt.Errorf("%v is not a finite number", f)
	}
	r := new(big.Rat)
	r.SetFloat64(f)
	return numberValue{rat: r, f: f, exact: true}, true, nil
}

func intNumber(i int64) numberValue {
	n := numberValue{rat: new(big.Rat).SetInt64(i)}
	n.f, n.exact = n.rat.Float64()
	if !n.exact {
		n.given = json.Number(strconv.FormatInt(i, 10))
	}
	return n
}

func uintNumber(u uint64) numberValue {
	r := new(big.Rat).SetInt(new(big.Int).SetUint64(u))
	n := numberValue{rat: r}
	n.f, n.exact = r.Float64()
	if !n.exact {
		n.given = json.Number(strconv.FormatUint(u, 10))
	}
	return n
}

// parseNumber reads a json.Number, which must follow JSON's number
// grammar (no NaN, Inf, hex, fractions or leading '+').
func parseNumber(s json.Number) (numberValue, error) {
	if !jsonNumber(string(s)) {
		return numberValue{}, fmt.Errorf("%q is not a JSON number", string(s))
	}
	r, ok := new(big.Rat).SetString(string(s))
	if !ok {
		return numberValue{}, fmt.Errorf("%q is not a JSON number", string(s))
	}
	n := numberValue{rat: r, given: s}
	n.f, n.exact = r.Float64()
	if math.IsInf(n.f, 0) {
		n.exact = false
	}
	return n, nil
}

// jsonNumber reports whether s follows the JSON number grammar.
func jsonNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
		if e, err := strconv.Atoi(s[start:i]); err != nil || e > maxExponent {
			return false
		}
	}
	return i == len(s) && len(s) <= maxNumberLen
}

// maxNumberLen bounds the digits of a json.Number answer (and the work of
// reading an exponent such as 1e999999999).
const maxNumberLen = 400

// maxExponent bounds a json.Number's exponent: big.Rat expands it.
const maxExponent = 1000

// String renders the number for a message.
func (n numberValue) String() string {
	if n.given != "" {
		return string(n.given)
	}
	return strconv.FormatFloat(n.f, 'g', -1, 64)
}

// isInt reports whether the number is an integer.
func (n numberValue) isInt() bool { return n.rat.IsInt() }

// cmpFloat compares the number with a schema bound.
func (n numberValue) cmpFloat(bound float64) int {
	return n.rat.Cmp(new(big.Rat).SetFloat64(bound))
}

// wire returns the value to send, or why the number cannot be sent
// exactly.
func (n numberValue) wire() (any, error) {
	if n.isInt() {
		num := n.rat.Num()
		if num.IsInt64() {
			return num.Int64(), nil
		}
		if num.IsUint64() {
			return num.Uint64(), nil
		}
	}
	if n.exact || n.shortest() {
		return n.f, nil
	}
	return nil, fmt.Errorf("%v cannot be sent exactly: an answer carries integers from -9223372036854775808 to 18446744073709551615 and the numbers a float64 holds (about 16 significant digits)", n)
}

// shortest reports whether the float64 nearest the number writes, in
// JSON, as the same number (0.1 does; 0.10000000000000000001 does not).
func (n numberValue) shortest() bool {
	if math.IsInf(n.f, 0) || math.IsNaN(n.f) {
		return false
	}
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(n.f, 'g', -1, 64))
	return ok && r.Cmp(n.rat) == 0
}

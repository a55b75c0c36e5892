package elicitation

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"testing"
)

const amountSchema = `{"type":"object","properties":{
	"n": {"type":"integer"},
	"bounded": {"type":"integer","minimum":1,"maximum":100},
	"x": {"type":"number"},
	"limit": {"type":"number","minimum":0,"maximum":10}}}`

func amountForm() Request {
	return Request{Key: "k", Mode: ModeForm, RequestedSchema: json.RawMessage(amountSchema)}
}

// TestNumbersKeepTheirValue: what a form answer's number is sent as, in
// JSON, is the value the user entered, whatever Go type carries it.
func TestNumbersKeepTheirValue(t *testing.T) {
	for _, tc := range []struct {
		field string
		in    any
		wire  string
	}{
		{"n", json.Number("9007199254740993"), "9007199254740993"}, // 2^53+1: a float64 would say ...992
		{"n", json.Number("18446744073709551615"), "18446744073709551615"},
		{"n", int64(math.MaxInt64), "9223372036854775807"},
		{"n", int64(math.MinInt64), "-9223372036854775808"},
		{"n", uint64(math.MaxUint64), "18446744073709551615"},
		{"n", float64(4), "4"},
		{"n", json.Number("4.0"), "4"},
		{"n", json.Number("1e3"), "1000"},
		{"n", json.Number("1e20"), "100000000000000000000"}, // a float64 holds it exactly
		{"n", float64(1e20), "100000000000000000000"},
		{"x", json.Number("0.1"), "0.1"},
		{"x", json.Number("9007199254740993"), "9007199254740993"},
		{"x", json.Number("1e20"), "100000000000000000000"},
		{"x", json.Number("1e300"), "1e+300"},
		{"x", float64(2.5), "2.5"},
		{"bounded", json.Number("100"), "100"},
	} {
		got, err := amountForm().Check(Response{Action: Accept, Content: map[string]any{tc.field: tc.in}})
		if err != nil {
			t.Errorf("%s=%#v: %v", tc.field, tc.in, err)
			continue
		}
		b, err := json.Marshal(got.Content[tc.field])
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.wire {
			t.Errorf("%s=%#v is sent as %s, want %s", tc.field, tc.in, b, tc.wire)
		}
	}
}

// TestNumbersRefused: NaN, infinities, strings that are not JSON numbers
// and out-of-range values are refused with a message naming the field,
// even when a bound is set (NaN compares false with every bound).
func TestNumbersRefused(t *testing.T) {
	for _, tc := range []struct {
		field string
		in    any
		msg   string
	}{
		{"n", math.NaN(), "not a finite number"},
		{"limit", math.NaN(), "not a finite number"},
		{"limit", math.Inf(1), "not a finite number"},
		{"x", math.Inf(-1), "not a finite number"},
		{"x", json.Number("NaN"), "not a JSON number"},
		{"x", json.Number("Infinity"), "not a JSON number"},
		{"x", json.Number("0x10"), "not a JSON number"},
		{"x", json.Number("1/3"), "not a JSON number"},
		{"x", json.Number("+1"), "not a JSON number"},
		{"x", json.Number("1e9999999999"), "not a JSON number"},
		{"n", json.Number("1.5"), "want an integer"},
		{"n", json.Number("100000000000000000001"), "cannot be sent exactly"},
		{"n", json.Number("-123456789012345678901234567890"), "cannot be sent exactly"},
		{"x", json.Number("3.14159265358979323846264338327950288"), "cannot be sent exactly"},
		{"x", json.Number("1e400"), "cannot be sent exactly"},
		{"n", json.Number("1e-400"), "want an integer"},
		{"bounded", json.Number("100.0000000000000000001"), "want an integer"},
		{"bounded", json.Number("101"), "above the maximum 100"},
		{"bounded", json.Number("100000000000000000000000"), "above the maximum 100"},
		{"limit", json.Number("10.000000000000000000001"), "above the maximum 10"},
		{"limit", json.Number("-0.0000000000000000000001"), "below the minimum 0"},
	} {
		_, err := amountForm().Check(Response{Action: Accept, Content: map[string]any{tc.field: tc.in}})
		var e *Error
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s=%#v: got %v, want an error saying %q", tc.field, tc.in, err, tc.msg)
		} else if !asError(err, &e) || e.Field != tc.field {
			t.Errorf("%s=%#v: %v does not name the field", tc.field, tc.in, err)
		}
	}
}

func asError(err error, e **Error) bool {
	x, ok := err.(*Error)
	*e = x
	return ok
}

// FuzzNumberAnswer: a number answer (as JSON text, decoded with UseNumber
// as a careful application does) is either refused or sent with exactly
// its value, never as a json.Number (go-sdk takes one for a string).
func FuzzNumberAnswer(f *testing.F) {
	for _, s := range []string{"9007199254740993", "1e20", "-0", "0.1", "1e400", "123456789012345678901234567890.5", "4.0", "1E+2"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, num string, integer bool) {
		if !json.Valid([]byte(num)) {
			return
		}
		dec := json.NewDecoder(strings.NewReader(num))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		field := "x"
		if integer {
			field = "n"
		}
		got, err := amountForm().Check(Response{Action: Accept, Content: map[string]any{field: v}})
		if err != nil {
			return
		}
		if _, ok := got.Content[field].(json.Number); ok {
			t.Fatalf("%s: sent as a json.Number", num)
		}
		b, err := json.Marshal(got.Content[field])
		if err != nil {
			t.Fatalf("%s: accepted value does not marshal: %v", num, err)
		}
		in, ok1 := new(big.Rat).SetString(strings.TrimSpace(num))
		out, ok2 := new(big.Rat).SetString(string(bytes.TrimSpace(b)))
		if !ok1 || !ok2 || in.Cmp(out) != 0 {
			t.Fatalf("%s was sent as %s", num, b)
		}
		if integer && !out.IsInt() {
			t.Fatalf("%s accepted as an integer", num)
		}
	})
}

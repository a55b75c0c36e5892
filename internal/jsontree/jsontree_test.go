package jsontree

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestParseEncode(t *testing.T) {
	in := `{"b":1,"a":{"z":[1.50,true,null,"<x>&\u2028"],"y":{}},"b":12345678901234567890}`
	v, err := Parse([]byte(in), 10)
	if err != nil {
		t.Fatal(err)
	}
	got := string(Encode(v))
	want := `{"b":12345678901234567890,"a":{"z":[1.50,true,null,"<x>&\u2028"],"y":{}}}`
	if got != want {
		t.Errorf("Encode = %s, want %s", got, want)
	}
	o := v.(*Object)
	o.SetFront("type", "object")
	o.ReplaceKey("a", "c")
	o.Del("b")
	c := o.Clone()
	c.Set("new", json.Number("1"))
	if got := string(Encode(o)); got != `{"type":"object","c":{"z":[1.50,true,null,"<x>&\u2028"],"y":{}}}` {
		t.Errorf("after edits: %s", got)
	}
	for _, bad := range []struct{ in, err string }{
		{`{"a":1} x`, "data after the top-level value"},
		{`[[[[1]]]]`, "nested deeper than 2 levels"},
		{`{"a":`, "unexpected EOF"},
	} {
		if _, err := Parse([]byte(bad.in), 2); err == nil || !strings.Contains(err.Error(), bad.err) {
			t.Errorf("Parse(%s) = %v, want %q", bad.in, err, bad.err)
		}
	}
}

// FuzzParse: what Parse accepts, encoding/json accepts, and Encode writes
// the same value back (a repeated key aside, which encoding/json also
// resolves to the last value).
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2,{"b":null}],"a":"x"}`, `"\ud800"`, `1e400`, `[{"<":"&"}]`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data, 64)
		if err != nil {
			return
		}
		out := Encode(v)
		a, err := unmarshal(data)
		if err != nil {
			t.Fatalf("Parse accepted %q, encoding/json did not: %v", data, err)
		}
		b, err := unmarshal(out)
		if err != nil {
			t.Fatalf("Encode wrote %q: %v", out, err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%q became %q", data, out)
		}
		if !bytes.Equal(Encode(CloneValue(v)), out) {
			t.Fatalf("the clone of %q encodes differently", data)
		}
	})
}

func unmarshal(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

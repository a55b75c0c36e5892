package gateway

import (
	"bytes"
	"encoding/json"
	"maps"
	"testing"
)

// membersByTokens reads the members of the JSON object b with
// encoding/json's Decoder: what members must agree with.
func membersByTokens(b []byte) (map[string]json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	m := make(map[string]json.RawMessage)
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return nil, false
		}
		if _, dup := m[key]; dup {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		m[key] = v
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	return m, len(bytes.TrimLeft(b[dec.InputOffset():], " \t\r\n")) == 0
}

func membersCases() []string {
	return []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":1,"a":2}`, `{"a":"x\"}","b":[1,{"c":"]"}]}`,
		`{"\u0061":true,"a":false}`, `{"k\\":null}`, `{ "a" : { "b" : [ ] } , "c":-1.5e3 }`,
		`[1]`, `"x"`, `{"a":1} {"b":2}`, `{"a":1}  `, `{"é":"ü","\ud83d\ude00":{}}`,
		`{"a":"\\\\"}`, `{"":0}`, `{"a":[[[[]]]],"b":{"c":{"d":{}}}}`,
	}
}

// TestMembers checks members against encoding/json's reading of the same
// objects.
func TestMembers(t *testing.T) {
	for _, c := range membersCases() {
		checkMembers(t, c)
	}
}

// FuzzMembers checks members against encoding/json's reading of any
// valid JSON.
func FuzzMembers(f *testing.F) {
	for _, c := range membersCases() {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, s string) { checkMembers(t, s) })
}

func checkMembers(t *testing.T, s string) {
	t.Helper()
	if !json.Valid([]byte(s)) {
		return // members reads valid JSON only
	}
	got, gotOK := members([]byte(s))
	want, wantOK := membersByTokens([]byte(s))
	if gotOK != wantOK || !maps.EqualFunc(got, want, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
		t.Fatalf("members(%q) = %q, %v; encoding/json reads %q, %v", s, got, gotOK, want, wantOK)
	}
}

// uniqueByTokens reports, with encoding/json's Decoder, whether no object
// in b (valid JSON) names a member twice: what uniqueMembers must agree
// with.
func uniqueByTokens(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	var values []json.RawMessage
	switch b[0] {
	case '{':
		m, ok := membersByTokens(b)
		if !ok {
			return false
		}
		for _, v := range m {
			values = append(values, v)
		}
	case '[':
		if json.Unmarshal(b, &values) != nil {
			panic("not JSON: " + string(b))
		}
	}
	for _, v := range values {
		if !uniqueByTokens(v) {
			return false
		}
	}
	return true
}

func uniqueMembersCases() []string {
	return append(membersCases(),
		`{"a":{"b":1,"b":2}}`, `[{"a":1},{"a":1}]`, `{"a":[{"b":1,"c":{"b":1}}],"b":{"a":1}}`,
		`{"a":"b","b":"a"}`, `{"a":{"x":1},"a":{"y":2}}`, `{"r":{"l":true},"s":{},"r":{}}`,
		`{"\u0061":1,"b":{"a":1,"\u0061":2}}`, `{"k":["k","k"],"v":{"k":"k"}}`,
		`{"a,":1,"b":{"a,":1,"a,":2}}`, `{"{":"}","[":"]","x":{"{":1}}`,
		`{"a0":0,"a1":1,"a2":2,"a3":3,"a4":4,"a5":5,"a6":6,"a7":7,"a8":8,"a9":9,"b0":0,"b1":1,"b2":2,"b3":3,"b4":4,"b5":5,"b6":6,"b7":7,"b8":8,"a3":3}`,
		`{"a0":0,"a1":1,"a2":2,"a3":3,"a4":4,"a5":5,"a6":6,"a7":7,"a8":8,"a9":9,"b0":0,"b1":1,"b2":2,"b3":3,"b4":4,"b5":5,"b6":6,"b7":7,"b8":{"a0":0},"b9":[{"a0":0}]}`,
	)
}

// TestUniqueMembers checks uniqueMembers against encoding/json's reading
// of the same JSON.
func TestUniqueMembers(t *testing.T) {
	for _, c := range uniqueMembersCases() {
		checkUniqueMembers(t, c)
	}
	for c, want := range map[string]bool{`{"a":{"x":1},"a":{"y":2}}`: false, `[{"a":1},{"a":{"b":[{"c":1,"c":1}]}}]`: false, `{"a":{"a":{"a":1}}}`: true, `"{\"a\":1,\"a\":1}"`: true} {
		if uniqueMembers([]byte(c)) != want || uniqueByTokens([]byte(c)) != want {
			t.Errorf("%s: uniqueMembers %v, encoding/json %v, want %v", c, uniqueMembers([]byte(c)), uniqueByTokens([]byte(c)), want)
		}
	}
}

// FuzzUniqueMembers checks uniqueMembers against encoding/json's reading
// of any valid JSON.
func FuzzUniqueMembers(f *testing.F) {
	for _, c := range uniqueMembersCases() {
		f.Add(c)
	}
	f.Fuzz(checkUniqueMembers)
}

func checkUniqueMembers(t *testing.T, c string) {
	if !json.Valid([]byte(c)) {
		return
	}
	if got, want := uniqueMembers([]byte(c)), uniqueByTokens([]byte(c)); got != want {
		t.Fatalf("uniqueMembers(%s) = %v, want %v", c, got, want)
	}
}

// TestMemberNamesOwnTheirBytes: the member names memberSpans reads, the
// common ones (commonName's constants) and any other, are each the name
// written, and stay so when the bytes they were read from are written
// over afterwards (as a buffer reused would be).
func TestMemberNamesOwnTheirBytes(t *testing.T) {
	names := []string{"jsonrpc", "id", "method", "params", "name", "arguments", "_meta", "progressToken",
		"io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientInfo", "io.modelcontextprotocol/clientCapabilities",
		"content", "structuredContent", "isError", "resultType", "inputRequests",
		"x", "nam", "names", "Name", "é", "_meta2"}
	for _, name := range names {
		if got := commonName([]byte(name)); got != name {
			t.Errorf("commonName(%q) = %q", name, got)
		}
		b := []byte(`{"` + name + `":1}`)
		spans, ok := memberSpans(b)
		m, mok := members(b)
		for i := range b {
			b[i] = 'z'
		}
		if !ok || !mok || len(spans) != 1 || spans[0].key != name || len(m) != 1 {
			t.Fatalf("read the name %q as %+v, %v", name, spans, ok)
		}
		for k := range m {
			if k != name {
				t.Errorf("members read the name %q as %q once its bytes were written over", name, k)
			}
		}
	}
}

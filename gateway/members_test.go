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

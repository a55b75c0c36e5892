package eino

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/eino-contrib/jsonschema"
)

var update = flag.Bool("update", false, "rewrite testdata/schemas/*.out.json")

// einoJSON returns json.Marshal of the eino schema ToolParams builds.
func einoJSON(t testing.TB, raw []byte) []byte {
	t.Helper()
	p, err := ToolParams(raw)
	if err != nil {
		t.Fatalf("ToolParams: %v", err)
	}
	s, err := p.ToJSONSchema()
	if err != nil {
		t.Fatalf("ToJSONSchema: %v", err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("json.Marshal(eino schema): %v", err)
	}
	return b
}

// jsonDiff compares two JSON documents structurally: objects by key set
// (order ignored), arrays element-wise, numbers by exact value. It returns
// "" when they are equal, else where and how they differ.
func jsonDiff(want, got []byte) string {
	w, err := parseJSON(want)
	if err != nil {
		return "want is not JSON: " + err.Error()
	}
	g, err := parseJSON(got)
	if err != nil {
		return "got is not JSON: " + err.Error()
	}
	return diffValues(w, g, "")
}

func diffValues(w, g any, path string) string {
	switch w := w.(type) {
	case *object:
		g, ok := g.(*object)
		if !ok {
			return path + ": want an object, got " + jsonType(g)
		}
		for _, k := range w.Keys {
			gv, ok := g.Vals[k]
			if !ok {
				return path + "/" + pointerToken(k) + ": keyword missing"
			}
			if d := diffValues(w.Vals[k], gv, path+"/"+pointerToken(k)); d != "" {
				return d
			}
		}
		for _, k := range g.Keys {
			if !w.Has(k) {
				return path + "/" + pointerToken(k) + ": unexpected keyword"
			}
		}
	case []any:
		g, ok := g.([]any)
		if !ok || len(g) != len(w) {
			return path + ": want an array of " + strconv.Itoa(len(w)) + ", got " + jsonType(g)
		}
		for i := range w {
			if d := diffValues(w[i], g[i], path+"/"+strconv.Itoa(i)); d != "" {
				return d
			}
		}
	default:
		if !equalJSON(w, g) {
			return path + ": want " + string(encodeJSON(w)) + ", got " + string(encodeJSON(g))
		}
	}
	return ""
}

func indent(b []byte) []byte {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		panic(err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

func goldenNames(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "schemas", "*.in.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no goldens: %v", err)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".in.json"))
	}
	sort.Strings(names)
	return names
}

// TestGoldens checks NormalizeSchema against testdata/schemas/NAME.out.json
// and that the eino schema ToolParams builds marshals to the normalised
// schema, keyword for keyword.
func TestGoldens(t *testing.T) {
	for _, name := range goldenNames(t) {
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", "schemas", name+".in.json"))
			if err != nil {
				t.Fatal(err)
			}
			norm, err := NormalizeSchema(in)
			if err != nil {
				t.Fatalf("NormalizeSchema: %v", err)
			}
			if !json.Valid(norm) {
				t.Fatalf("NormalizeSchema output is not JSON: %s", norm)
			}
			outPath := filepath.Join("testdata", "schemas", name+".out.json")
			if *update {
				if err := os.WriteFile(outPath, indent(norm), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(outPath)
			if err != nil {
				t.Fatal(err)
			}
			if d := jsonDiff(want, norm); d != "" {
				t.Errorf("NormalizeSchema differs from %s: %s\ngot %s", outPath, d, norm)
			}
			// Every keyword of the normalised schema survives eino.
			if d := jsonDiff(norm, einoJSON(t, in)); d != "" {
				t.Errorf("eino schema lost part of the normalised schema: %s", d)
			}
			// Normalising is idempotent.
			again, err := NormalizeSchema(norm)
			if err != nil {
				t.Fatalf("NormalizeSchema(normalised): %v", err)
			}
			if d := jsonDiff(norm, again); d != "" {
				t.Errorf("not idempotent: %s", d)
			}
		})
	}
}

func normalized(t *testing.T, in string) string {
	t.Helper()
	out, err := NormalizeSchema(json.RawMessage(in))
	if err != nil {
		t.Fatalf("NormalizeSchema(%s): %v", in, err)
	}
	return string(out)
}

func TestNormalizeRewrites(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"true", `true`, `{"type":"object","properties":{}}`},
		{"empty", ` {} `, `{"type":"object","properties":{}}`},
		{"type object", `{"type":"object"}`, `{"type":"object","properties":{}}`},
		{"missing type", `{"properties":{"a":{}}}`, `{"type":"object","properties":{"a":{}}}`},
		{"top-level ref", `{"$ref":"#/definitions/A","definitions":{"A":{"type":"object"}}}`,
			`{"type":"object","properties":{},"$ref":"#/$defs/A","$defs":{"A":{"type":"object"}}}`},
		{"not object-like", `{"items":{"type":"string"}}`, `{"items":{"type":"string"}}`},
		{"other type kept", `{"type":"string"}`, `{"type":"string"}`},
		{"definitions merged into $defs", `{"type":"object","properties":{},"$defs":{"A":{}},"definitions":{"B":{},"A":{}}}`,
			`{"type":"object","properties":{},"$defs":{"A":{},"B":{}}}`},
		{"nested definitions and refs", `{"type":"object","properties":{"p":{"definitions":{"X":{"type":"string"}},"$ref":"#/properties/p/definitions/X"}}}`,
			`{"type":"object","properties":{"p":{"$defs":{"X":{"type":"string"}},"$ref":"#/properties/p/$defs/X"}}}`},
		{"refs: anchors, other documents, unknown targets kept",
			`{"type":"object","properties":{"a":{"$ref":"#foo"},"b":{"$ref":"other.json#/definitions/X"},"c":{"$ref":"#/definitions/Missing"},"d":{"$ref":"#"}}}`,
			`{"type":"object","properties":{"a":{"$ref":"#foo"},"b":{"$ref":"other.json#/definitions/X"},"c":{"$ref":"#/definitions/Missing"},"d":{"$ref":"#"}}}`},
		{"ref with escaped and percent-encoded names", `{"type":"object","properties":{"a":{"$ref":"#/definitions/a~1b%20c/properties/x"}},"definitions":{"a/b c":{"properties":{"x":{"type":"string"}}}}}`,
			`{"type":"object","properties":{"a":{"$ref":"#/$defs/a~1b%20c/properties/x"}},"$defs":{"a/b c":{"properties":{"x":{"type":"string"}}}}}`},
		{"ref into a tuple", `{"type":"object","properties":{"t":{"items":[{"type":"string"},{"definitions":{"D":{}}}],"additionalItems":{"$ref":"#/properties/t/items/1/definitions/D"}}}}`,
			`{"type":"object","properties":{"t":{"prefixItems":[{"type":"string"},{"$defs":{"D":{}}}],"items":{"$ref":"#/properties/t/prefixItems/1/$defs/D"}}}}`},
		{"ref to additionalItems", `{"type":"object","properties":{"t":{"items":[{}],"additionalItems":{"type":"number"}},"u":{"$ref":"#/properties/t/additionalItems"}}}`,
			`{"type":"object","properties":{"t":{"prefixItems":[{}],"items":{"type":"number"}},"u":{"$ref":"#/properties/t/items"}}}`},
		{"refs relative to a nested $id", `{"$id":"https://example.com/root.json","type":"object","properties":{"n":{"$id":"nested.json","definitions":{"A":{}},"properties":{"x":{"$ref":"#/definitions/A"}}},"m":{"$ref":"nested.json#/definitions/A"},"k":{"$ref":"https://example.com/root.json#/properties/n/definitions/A"}}}`,
			`{"$id":"https://example.com/root.json","type":"object","properties":{"n":{"$id":"nested.json","$defs":{"A":{}},"properties":{"x":{"$ref":"#/$defs/A"}}},"m":{"$ref":"nested.json#/$defs/A"},"k":{"$ref":"https://example.com/root.json#/properties/n/$defs/A"}}}`},
		{"items that is a schema stays", `{"type":"array","items":{"type":"string"},"additionalItems":false}`,
			`{"type":"array","items":{"type":"string"},"additionalItems":false}`},
		{"exclusive bounds", `{"type":"object","properties":{"a":{"minimum":1,"exclusiveMinimum":true,"maximum":9,"exclusiveMaximum":true},"b":{"minimum":1,"exclusiveMinimum":false},"c":{"exclusiveMaximum":true},"d":{"exclusiveMinimum":3}}}`,
			`{"type":"object","properties":{"a":{"exclusiveMinimum":1,"exclusiveMaximum":9},"b":{"minimum":1},"c":{},"d":{"exclusiveMinimum":3}}}`},
		{"dependencies", `{"type":"object","properties":{},"dependencies":{"a":["b"],"c":{"required":["d"]}},"dependentRequired":{"x":["y"]}}`,
			`{"type":"object","properties":{},"dependentRequired":{"x":["y"],"a":["b"]},"dependentSchemas":{"c":{"required":["d"]}}}`},
		{"$schema of old drafts", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"$schema":"https://json-schema.org/draft/2019-09/schema"}}}`,
			`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"a":{"$schema":"https://json-schema.org/draft/2020-12/schema"}}}`},
		{"custom $schema kept", `{"$schema":"https://example.com/meta","type":"object","properties":{}}`,
			`{"$schema":"https://example.com/meta","type":"object","properties":{}}`},
		{"integral counts", `{"type":"object","properties":{"a":{"maxLength":5.0,"minLength":0.0,"maxItems":1e2,"minProperties":2500e-2}}}`,
			`{"type":"object","properties":{"a":{"maxLength":5,"minLength":0,"maxItems":100,"minProperties":25}}}`},
		{"unknown keywords and numbers kept", `{"type":"object","properties":{},"x-a":{"b":[1.10,1e400,-0]},"Title":"t","unevaluatedProperties":{"definitions":{"Z":{}}}}`,
			`{"type":"object","properties":{},"x-a":{"b":[1.10,1e400,-0]},"Title":"t","unevaluatedProperties":{"$defs":{"Z":{}}}}`},
		{"strings re-encoded", `{"type":"object","properties":{},"description":"<a> & \"b\"\n\u2028\u0001é"}`,
			`{"type":"object","properties":{},"description":"<a> & \"b\"\n\u2028\u0001é"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := normalized(t, tt.in)
			if d := jsonDiff([]byte(tt.want), []byte(got)); d != "" {
				t.Errorf("NormalizeSchema(%s)\n got %s\nwant %s\n(%s)", tt.in, got, tt.want, d)
			}
			if d := jsonDiff([]byte(got), einoJSON(t, []byte(tt.in))); d != "" {
				t.Errorf("eino schema differs from the normalised one: %s", d)
			}
		})
	}
}

func TestNormalizeKeepsKeyOrder(t *testing.T) {
	got := normalized(t, `{"properties":{"zeta":{"type":"string"},"alpha":{"type":"string"}},"required":["zeta"]}`)
	want := `{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"string"}},"required":["zeta"]}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	p, err := ToolParams(json.RawMessage(got))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := p.ToJSONSchema()
	if first := s.Properties.Oldest().Key; first != "zeta" {
		t.Errorf("first eino property = %q, want zeta", first)
	}
}

func TestToolParamsPreserves(t *testing.T) {
	in := `{"type":"object","properties":{
		"n":{"type":"integer","maximum":12345678901234567890,"default":9007199254740993,"enum":[1,12345678901234567891],"const":0.1,"examples":[1e400]},
		"v":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null},
		"c":{"const":null},
		"f":{"uniqueItems":false,"readOnly":false,"deprecated":false,"writeOnly":false,"title":"","format":"","required":[],"enum":[],"examples":[],"allOf":[],"$defs":{},"patternProperties":{},"dependentRequired":{},"type":[]},
		"e":{"items":{},"not":{},"additionalProperties":{},"propertyNames":true,"contains":false},
		"Case":{"Title":"upper","title":"lower","TYPE":"x","type":"string"}
	},"x-vendor":{"k":[1,2]}}`
	got := einoJSON(t, []byte(in))
	if d := jsonDiff([]byte(normalized(t, in)), got); d != "" {
		t.Fatalf("lost: %s\n%s", d, got)
	}
	for _, s := range []string{`12345678901234567890`, `9007199254740993`, `12345678901234567891`, `1e400`, `"default":null`, `"const":null`, `"items":{}`, `"Title":"upper"`, `"title":"lower"`} {
		if !bytes.Contains(got, []byte(s)) {
			t.Errorf("eino JSON lacks %s: %s", s, got)
		}
	}

	// The Go values: exact float64 where possible, else json.Number; Extras for the rest.
	p, err := ToolParams(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := p.ToJSONSchema()
	n, _ := s.Properties.Get("n")
	if n.Default != json.Number("9007199254740993") || n.Const != 0.1 || n.Enum[0] != float64(1) || n.Enum[1] != json.Number("12345678901234567891") {
		t.Errorf("n: default %#v const %#v enum %#v", n.Default, n.Const, n.Enum)
	}
	if n.Maximum != "12345678901234567890" {
		t.Errorf("n.Maximum = %q", n.Maximum)
	}
	if s.Extras["x-vendor"] == nil {
		t.Errorf("x-vendor not in Extras: %#v", s.Extras)
	}
	c, _ := s.Properties.Get("Case")
	if c.Title != "lower" || c.Type != "string" || c.Extras["Title"] != "upper" || c.Extras["TYPE"] != "x" {
		t.Errorf("Case: title %q type %q extras %#v", c.Title, c.Type, c.Extras)
	}
	v, _ := s.Properties.Get("v")
	if _, ok := v.Extras["default"]; !ok || v.Default != nil {
		t.Errorf("v: default %#v extras %#v", v.Default, v.Extras)
	}
}

func TestToolParamsDraft07(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "schemas", "draft07_pydantic_v1.in.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ToolParams(in)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := p.ToJSONSchema()
	if len(s.Definitions) != 3 || s.Definitions["User"] == nil {
		t.Fatalf("$defs = %v", s.Definitions)
	}
	if _, ok := s.Extras["definitions"]; ok {
		t.Errorf("definitions kept in Extras")
	}
	labels, _ := s.Properties.Get("labels")
	if labels.Items.Ref != "#/$defs/Label" {
		t.Errorf("labels.items.$ref = %q", labels.Items.Ref)
	}
	manager, _ := s.Definitions["User"].Properties.Get("manager")
	if manager.Ref != "#/$defs/User" {
		t.Errorf("manager.$ref = %q", manager.Ref)
	}
	var _ *jsonschema.Schema = s
}

func TestNormalizeErrors(t *testing.T) {
	tests := []struct{ name, in, path, reason string }{
		{"empty input", ``, "", "empty input"},
		{"blank input", " \n", "", "empty input"},
		{"invalid JSON", `{"type":`, "", "not valid JSON"},
		{"trailing data", `{} {}`, "", "not valid JSON"},
		{"null", `null`, "", "want a JSON object or true, got null"},
		{"array", `[]`, "", "got an array"},
		{"string", `"object"`, "", "got a string"},
		{"number", `1`, "", "got the number 1"},
		{"false", `false`, "", "accepts no arguments"},
		{"type null", `{"type":null}`, "/type", "want a string or an array of strings, got null"},
		{"type array of numbers", `{"type":["string",1]}`, "/type/1", "want a string"},
		{"negative maxLength", `{"type":"object","properties":{"a":{"maxLength":-1}}}`, "/properties/a/maxLength", "non-negative integer"},
		{"fractional minItems", `{"minItems":1.5}`, "/minItems", "non-negative integer"},
		{"huge maxItems", `{"maxItems":1e30}`, "/maxItems", "non-negative integer"},
		{"string minimum", `{"minimum":"5"}`, "/minimum", "want a number, got a string"},
		{"required not array", `{"required":"a"}`, "/required", "want an array of strings"},
		{"required with number", `{"required":["a",2]}`, "/required/1", "want a string"},
		{"null property", `{"properties":{"a":null}}`, "/properties/a", "want a schema"},
		{"properties array", `{"properties":[]}`, "/properties", "want an object of schemas"},
		{"anyOf object", `{"anyOf":{}}`, "/anyOf", "want an array of schemas"},
		{"items number", `{"items":3}`, "/items", "want a schema"},
		{"tuple item number", `{"items":[{},3]}`, "/items/1", "want a schema"},
		{"tuple and prefixItems", `{"items":[{}],"prefixItems":[{}]}`, "/items", "both an items array and prefixItems"},
		{"additionalItems of a tuple", `{"items":[{}],"additionalItems":1}`, "/additionalItems", "want a schema"},
		{"definitions not object", `{"definitions":[]}`, "/definitions", "want an object of schemas"},
		{"definitions conflict", `{"$defs":{"A":{"type":"string"}},"definitions":{"A":{"type":"number"}}}`, "/definitions/A", "differs from $defs/A"},
		{"dependencies bad", `{"dependencies":{"a":1}}`, "/dependencies/a", "want a schema"},
		{"title null", `{"title":null}`, "/title", "want a string, got null"},
		{"enum not array", `{"enum":"a"}`, "/enum", "want an array"},
		{"ref number", `{"$ref":1}`, "/$ref", "want a string"},
		{"deep", strings.Repeat(`{"not":`, maxSchemaDepth+1) + `{}` + strings.Repeat(`}`, maxSchemaDepth+1), "", "nested deeper"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NormalizeSchema(json.RawMessage(tt.in))
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *SchemaError", err)
			}
			if tt.name != "deep" && se.Path != tt.path {
				t.Errorf("Path = %q, want %q (%v)", se.Path, tt.path, err)
			}
			if !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("error %q does not say %q", err, tt.reason)
			}
			if _, err2 := ToolParams(json.RawMessage(tt.in)); err2 == nil || err2.Error() != err.Error() {
				t.Errorf("ToolParams error = %v, want %v", err2, err)
			}
		})
	}
}

// TestEinoKeywords checks einoKeywords against the JSON tags of eino's
// jsonschema.Schema, so that a new version of that package with other
// fields is noticed.
func TestEinoKeywords(t *testing.T) {
	tags := map[string]bool{"type": true} // Type and TypeEnhanced are json:"-", marshalled as "type"
	st := reflect.TypeOf(jsonschema.Schema{})
	for i := 0; i < st.NumField(); i++ {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			tags[name] = true
		}
	}
	for name := range tags {
		if _, ok := einoKeywords[name]; !ok {
			t.Errorf("jsonschema.Schema has %q, einoKeywords does not", name)
		}
	}
	for name := range einoKeywords {
		if !tags[name] {
			t.Errorf("einoKeywords has %q, jsonschema.Schema does not", name)
		}
	}
}

func FuzzNormalizeSchema(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "schemas", "*.json"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		`true`, `false`, `null`, `[]`, `{"type":null}`, `{"items":[{"$ref":"#/items/0"}],"additionalItems":{"$ref":"#/additionalItems"}}`,
		`{"definitions":{"a":{"$ref":"#/definitions/a"}},"$defs":{"a":{"$ref":"#/definitions/a"}}}`,
		`{"exclusiveMinimum":true,"minimum":1e400}`, `{"maxLength":18446744073709551615}`, `{"maxLength":18446744073709551616}`,
		`{"dependencies":{"a":["b"],"c":{"dependencies":{"d":{}}}}}`, `{"$id":"http://x/y","properties":{"a":{"$id":"z","$ref":"#/definitions/b"}}}`,
		`{"const":null,"default":{"a":[1.0,null]},"enum":[],"x-":{"$ref":"#/definitions/a"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := NormalizeSchema(in)
		p, perr := ToolParams(in)
		if (err == nil) != (perr == nil) {
			t.Fatalf("NormalizeSchema err %v, ToolParams err %v", err, perr)
		}
		if errors.Is(err, errPanicked) || errors.Is(perr, errPanicked) {
			t.Fatalf("the conversion panicked: %v / %v", err, perr)
		}
		if err != nil {
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a *SchemaError", err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("output is not valid JSON: %q", out)
		}
		s, err := p.ToJSONSchema()
		if err != nil {
			t.Fatal(err)
		}
		eb, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("json.Marshal(eino schema): %v", err)
		}
		if d := jsonDiff(out, eb); d != "" {
			t.Fatalf("eino schema differs from the normalised one: %s\nnormalised %s\neino       %s", d, out, eb)
		}
		again, err := NormalizeSchema(out)
		if err != nil {
			t.Fatalf("NormalizeSchema(normalised): %v", err)
		}
		if d := jsonDiff(out, again); d != "" {
			t.Fatalf("not idempotent: %s\nonce  %s\ntwice %s", d, out, again)
		}
	})
}

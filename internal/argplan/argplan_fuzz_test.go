package argplan

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// FuzzTransformSchema applies an argument transform to any schema and
// sends any arguments through its plan: no panic; a schema that is one
// JSON object, without a hidden argument; arguments for the wire that are
// one JSON object holding a hidden argument's fixed value exactly once and
// every default.
func FuzzTransformSchema(f *testing.F) {
	add := `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false}`
	f.Add(add, "b", "", `10`, true, "", `{"a":2,"b":99}`)
	f.Add(add, "a", "x", `1`, false, "The first.", `{"x":2}`)
	f.Add(add, "a", "b", ``, false, "", `{"b":1}`)
	f.Add(add, "c", "", `1`, false, "", `{}`)
	f.Add(`{"type":"object","properties":{"q":true,"r":false}}`, "q", "query", `"x"`, false, "d", `null`)
	f.Add(`{"properties":{"a":{}},"required":"a"}`, "a", "", ``, true, "", ` {"a":1,"a":2} `)
	f.Add(`{"properties":[1]}`, "a", "", ``, false, "", `[1]`)
	f.Add(`{"$defs":{"x":{"type":"string"}},"properties":{"k":{"$ref":"#/$defs/x"}},"required":["k"]}`, "k", "key", `"v"`, false, "", `{"key":"w","k":"z"}`)
	f.Fuzz(func(t *testing.T, schema, arg, name, def string, hide bool, desc, args string) {
		at := &Arg{Name: name, Description: desc, Hide: hide}
		if json.Valid([]byte(def)) {
			at.Default = json.RawMessage(def)
		}
		out, plan, err := Transform(json.RawMessage(schema), map[string]*Arg{arg: at})
		if err != nil {
			if out != nil || plan != nil {
				t.Fatal("a schema or plan with an error")
			}
			return
		}
		top, ok := objectMembers(out)
		if !ok {
			t.Fatalf("schema %s is not one JSON object", out)
		}
		for _, m := range top {
			if m.key != "properties" {
				continue
			}
			props, ok := objectMembers(m.val)
			if ok && hide && slices.ContainsFunc(props, func(p member) bool { return p.key == arg }) {
				t.Fatalf("hidden %q is still in %s", arg, out)
			}
		}
		wire := plan.Wire(json.RawMessage(args))
		ms, ok := objectMembers(wire)
		if !ok {
			if _, in := objectMembers([]byte(args)); in || isEmptyArgs(args) {
				t.Fatalf("arguments %s became %s, not one JSON object", args, wire)
			}
			return
		}
		count := 0
		for _, m := range ms {
			if m.key == arg {
				count++
				if hide && len(at.Default) > 0 && !jsonEqual(m.val, at.Default) {
					t.Fatalf("hidden %q sent as %s, not %s", arg, m.val, at.Default)
				}
			}
		}
		if hide && len(at.Default) > 0 && count != 1 {
			t.Fatalf("hidden %q sent %d times in %s", arg, count, wire)
		}
		if !hide && len(at.Default) > 0 && count == 0 {
			t.Fatalf("default of %q not sent in %s (model sent %s)", arg, wire, args)
		}
	})
}

func isEmptyArgs(s string) bool {
	s = string(bytes.TrimSpace([]byte(s)))
	return s == "" || s == "null"
}

func jsonEqual(a, b []byte) bool {
	var x, y bytes.Buffer
	return json.Compact(&x, a) == nil && json.Compact(&y, b) == nil && bytes.Equal(x.Bytes(), y.Bytes())
}

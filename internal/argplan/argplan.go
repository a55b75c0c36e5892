package argplan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// member is one member of a JSON object, its value verbatim.
type member struct {
	key string
	val json.RawMessage
}

// objectMembers returns the members of the JSON object b in order, or
// false when b is not one valid JSON object.
func objectMembers(b []byte) ([]member, bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' || !json.Valid(b) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, false
		}
		out = append(out, member{key: key, val: val})
	}
	return out, true
}

// encodeObject writes members as one JSON object, in order.
func encodeObject(ms []member) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// setMember sets key to val in ms, in place if present, else at the end.
func setMember(ms []member, key string, val json.RawMessage) []member {
	for i := range ms {
		if ms[i].key == key {
			ms[i].val = val
			return ms
		}
	}
	return append(ms, member{key: key, val: val})
}

// Arg is one argument's transform, by the server's name for it: the
// root's ArgTransform as plain values.
type Arg struct {
	// Name, if set, is the argument's name as the model sees it.
	Name string
	// Description, if set, replaces the argument's description.
	Description string
	// Default, if set, is sent when the model leaves the argument out
	// (always, in place of a hidden argument).
	Default json.RawMessage
	// Hide removes the argument from the schema the model sees.
	Hide bool
}

// Plan turns the arguments a model sends into those the server gets:
// renamed arguments get their server names back, hidden ones their fixed
// values, and defaults fill what the model left out. A nil Plan passes
// arguments as they are.
type Plan struct {
	rename   map[string]string // the model's name -> the server's
	hidden   map[string]bool   // server names the model cannot set
	fixed    []member          // hidden arguments' values, always sent
	defaults []member          // shown arguments' defaults, sent when absent
}

// Wire returns the arguments to send for args, the model's. Arguments
// that are not one JSON object are returned as they are, for the call to
// refuse.
func (p *Plan) Wire(args json.RawMessage) json.RawMessage {
	if p == nil {
		return args
	}
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		trimmed = []byte("{}")
	}
	ms, ok := objectMembers(trimmed)
	if !ok {
		return args
	}
	out := make([]member, 0, len(ms)+len(p.fixed)+len(p.defaults))
	renamed := make(map[string]bool)
	for _, m := range ms {
		if to, ok := p.rename[m.key]; ok {
			m.key = to
			renamed[to] = true
			// The renamed argument wins over one the model sent under
			// the server's name.
			out = slices.DeleteFunc(out, func(o member) bool { return o.key == to })
		} else if renamed[m.key] {
			continue
		}
		if p.hidden[m.key] {
			continue
		}
		out = append(out, m)
	}
	out = append(out, p.fixed...)
	for _, d := range p.defaults {
		if !slices.ContainsFunc(out, func(o member) bool { return o.key == d.key }) {
			out = append(out, d)
		}
	}
	return encodeObject(out)
}

// Transform applies the argument transforms args (by the server's
// name for each argument) to the input schema and returns the schema to
// show the model and the plan for the wire. Its errors name the argument.
func Transform(schema json.RawMessage, args map[string]*Arg) (json.RawMessage, *Plan, error) {
	top, ok := objectMembers(schema)
	if !ok {
		return nil, nil, fmt.Errorf("the tool's input schema is not a JSON object")
	}
	var props []member
	var required []string
	for _, m := range top {
		switch m.key {
		case "properties":
			props, _ = objectMembers(m.val)
		case "required":
			_ = json.Unmarshal(m.val, &required)
		}
	}
	plan := &Plan{rename: map[string]string{}, hidden: map[string]bool{}}
	names := make([]string, 0, len(args))
	for name, a := range args {
		if a != nil {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		a := args[name]
		i := slices.IndexFunc(props, func(m member) bool { return m.key == name })
		if i < 0 {
			return nil, nil, fmt.Errorf("argument %q: the tool's input schema has no such property (it has: %s)", name, propertyNames(props))
		}
		isRequired := slices.Contains(required, name)
		hasDefault := len(a.Default) > 0
		if a.Hide {
			if isRequired && !hasDefault {
				return nil, nil, fmt.Errorf("argument %q: the server requires it, so hiding it needs a default to send in its place", name)
			}
			plan.hidden[name] = true
			if hasDefault {
				plan.fixed = append(plan.fixed, member{key: name, val: a.Default})
			}
			props = slices.Delete(props, i, i+1)
			required = slices.DeleteFunc(required, func(r string) bool { return r == name })
			continue
		}
		props[i].val = transformProperty(props[i].val, a)
		if hasDefault {
			plan.defaults = append(plan.defaults, member{key: name, val: a.Default})
			required = slices.DeleteFunc(required, func(r string) bool { return r == name })
		}
		if a.Name != "" && a.Name != name {
			if other, dup := plan.rename[a.Name]; dup {
				return nil, nil, fmt.Errorf("arguments %q and %q are both renamed to %q", other, name, a.Name)
			}
			plan.rename[a.Name] = name
		}
	}
	if err := renameProperties(props, required, plan.rename); err != nil {
		return nil, nil, err
	}
	out := make([]member, 0, len(top))
	for _, m := range top {
		switch m.key {
		case "properties":
			m.val = encodeObject(props)
		case "required":
			if len(required) == 0 {
				continue
			}
			m.val, _ = json.Marshal(required)
		}
		out = append(out, m)
	}
	return encodeObject(out), plan, nil
}

// transformProperty sets the default and description of one property
// schema.
func transformProperty(prop json.RawMessage, a *Arg) json.RawMessage {
	if len(a.Default) == 0 && a.Description == "" {
		return prop
	}
	ms, ok := objectMembers(prop)
	if !ok {
		ms = nil // a boolean schema: true (anything) becomes an object
	}
	if len(a.Default) > 0 {
		ms = setMember(ms, "default", a.Default)
	}
	if a.Description != "" {
		d, _ := json.Marshal(a.Description)
		ms = setMember(ms, "description", d)
	}
	return encodeObject(ms)
}

// renameProperties gives properties and required their model names
// (rename maps each model name to the server's), refusing a name that two
// arguments would share.
func renameProperties(props []member, required []string, rename map[string]string) error {
	if len(rename) == 0 {
		return nil
	}
	toModel := make(map[string]string, len(rename))
	for model, server := range rename {
		toModel[server] = model
	}
	seen := make(map[string]string, len(props))
	for i := range props {
		server := props[i].key
		if model, ok := toModel[server]; ok {
			props[i].key = model
		}
		if other, dup := seen[props[i].key]; dup {
			return fmt.Errorf("arguments %q and %q would both be shown to the model as %q", other, server, props[i].key)
		}
		seen[props[i].key] = server
	}
	for i, r := range required {
		if model, ok := toModel[r]; ok {
			required[i] = model
		}
	}
	return nil
}

// propertyNames lists the names of props for a message.
func propertyNames(props []member) string {
	if len(props) == 0 {
		return "none"
	}
	names := make([]string, len(props))
	for i, p := range props {
		names[i] = fmt.Sprintf("%q", p.key)
	}
	return strings.Join(names, ", ")
}

// ModelNames maps the server's names of renamed arguments to the model's.
func (p *Plan) ModelNames() map[string]string {
	if p == nil || len(p.rename) == 0 {
		return nil
	}
	out := make(map[string]string, len(p.rename))
	for m, s := range p.rename {
		out[s] = m
	}
	return out
}

// Package jsontree is the ordered JSON tree that schemaprofile and the
// eino binding rewrite schemas in: objects keep their keys in input order
// (the order of properties is what a model reads, and strict OpenAI
// generates in it) and numbers stay json.Number, so nothing is rounded.
package jsontree

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// Object is a JSON object that keeps its keys in input order. Values are
// *Object, []any, string, json.Number, bool or nil.
type Object struct {
	// Keys are the keys in order; Vals holds their values.
	Keys []string
	Vals map[string]any
}

// New returns an empty object.
func New() *Object { return &Object{Vals: map[string]any{}} }

// Get returns the value of k.
func (o *Object) Get(k string) (any, bool) {
	v, ok := o.Vals[k]
	return v, ok
}

// Has reports whether o has k.
func (o *Object) Has(k string) bool { _, ok := o.Vals[k]; return ok }

// Set adds or replaces k, keeping the position of an existing key.
func (o *Object) Set(k string, v any) {
	if _, ok := o.Vals[k]; !ok {
		o.Keys = append(o.Keys, k)
	}
	o.Vals[k] = v
}

// SetFront replaces the value of k, or inserts k first.
func (o *Object) SetFront(k string, v any) {
	if _, ok := o.Vals[k]; !ok {
		o.Keys = append([]string{k}, o.Keys...)
	}
	o.Vals[k] = v
}

// ReplaceKey renames old to nu in place, keeping its position. nu must be
// absent.
func (o *Object) ReplaceKey(old, nu string) {
	for i, k := range o.Keys {
		if k == old {
			o.Keys[i] = nu
		}
	}
	o.Vals[nu] = o.Vals[old]
	delete(o.Vals, old)
}

// Del removes k.
func (o *Object) Del(k string) {
	if _, ok := o.Vals[k]; !ok {
		return
	}
	delete(o.Vals, k)
	for i, kk := range o.Keys {
		if kk == k {
			o.Keys = append(o.Keys[:i:i], o.Keys[i+1:]...)
			return
		}
	}
}

// Str returns k's value if it is a string.
func (o *Object) Str(k string) (string, bool) {
	s, ok := o.Vals[k].(string)
	return s, ok
}

// Obj returns k's value if it is an object.
func (o *Object) Obj(k string) (*Object, bool) {
	m, ok := o.Vals[k].(*Object)
	return m, ok
}

// Clone copies o deeply.
func (o *Object) Clone() *Object { return CloneValue(o).(*Object) }

// CloneValue copies v deeply.
func CloneValue(v any) any {
	switch v := v.(type) {
	case *Object:
		c := &Object{Keys: append([]string(nil), v.Keys...), Vals: make(map[string]any, len(v.Vals))}
		for k, x := range v.Vals {
			c.Vals[k] = CloneValue(x)
		}
		return c
	case []any:
		c := make([]any, len(v))
		for i, x := range v {
			c[i] = CloneValue(x)
		}
		return c
	}
	return v
}

// Parse decodes exactly one JSON value, nested at most maxDepth deep,
// keeping object key order and numbers as json.Number. A repeated key
// keeps its first position and its last value.
func Parse(data []byte, maxDepth int) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec, 0, maxDepth)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the top-level value")
	}
	return v, nil
}

func parseValue(dec *json.Decoder, depth, maxDepth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := New()
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, ok := kt.(string)
			if !ok {
				return nil, fmt.Errorf("object key %v is not a string", kt)
			}
			v, err := parseValue(dec, depth+1, maxDepth)
			if err != nil {
				return nil, err
			}
			o.Set(k, v)
		}
		if _, err := dec.Token(); err != nil { // '}'
			return nil, err
		}
		return o, nil
	case json.Delim('['):
		a := []any{}
		for dec.More() {
			v, err := parseValue(dec, depth+1, maxDepth)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		if _, err := dec.Token(); err != nil { // ']'
			return nil, err
		}
		return a, nil
	}
	return tok, nil // string, json.Number, bool, nil
}

// Encode writes v compactly, objects in key order, numbers verbatim,
// strings without HTML escaping. A value of another type is written as
// encoding/json writes it.
func Encode(v any) []byte {
	var b bytes.Buffer
	write(&b, v)
	return b.Bytes()
}

func write(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case json.Number:
		b.WriteString(string(v))
	case string:
		WriteString(b, v)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			write(b, e)
		}
		b.WriteByte(']')
	case *Object:
		b.WriteByte('{')
		for i, k := range v.Keys {
			if i > 0 {
				b.WriteByte(',')
			}
			WriteString(b, k)
			b.WriteByte(':')
			write(b, v.Vals[k])
		}
		b.WriteByte('}')
	default:
		data, _ := json.Marshal(v)
		b.Write(data)
	}
}

// WriteString writes s as a JSON string: invalid UTF-8 as U+FFFD, U+2028
// and U+2029 escaped, <, > and & as they are.
func WriteString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == '\t':
				b.WriteString(`\t`)
			case c < 0x20:
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\ufffd`)
		case r == '\u2028' || r == '\u2029':
			b.WriteString(`\u202`)
			b.WriteByte(hex[r&0xf])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}

package schemaprofile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxDepth bounds the nesting of JSON values this package reads.
const maxDepth = 256

// object is a JSON object that keeps its keys in input order (the order of
// properties is what a model reads, and strict OpenAI generates in it).
type object struct {
	keys []string
	vals map[string]any
}

func newObject() *object { return &object{vals: map[string]any{}} }

func (o *object) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

func (o *object) has(k string) bool { _, ok := o.vals[k]; return ok }

// set adds or replaces k, keeping the position of an existing key.
func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, kk := range o.keys {
		if kk == k {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			return
		}
	}
}

func (o *object) str(k string) (string, bool) {
	s, ok := o.vals[k].(string)
	return s, ok
}

func (o *object) obj(k string) (*object, bool) {
	m, ok := o.vals[k].(*object)
	return m, ok
}

// clone copies o deeply.
func (o *object) clone() *object { return cloneValue(o).(*object) }

func cloneValue(v any) any {
	switch v := v.(type) {
	case *object:
		c := &object{keys: append([]string(nil), v.keys...), vals: make(map[string]any, len(v.vals))}
		for k, x := range v.vals {
			c.vals[k] = cloneValue(x)
		}
		return c
	case []any:
		c := make([]any, len(v))
		for i, x := range v {
			c[i] = cloneValue(x)
		}
		return c
	}
	return v
}

// decode reads one JSON value, objects as *object and numbers as
// json.Number.
func decode(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := decodeValue(d, 0)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

func decodeValue(d *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := newObject()
		for d.More() {
			kt, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(d, depth+1)
			if err != nil {
				return nil, err
			}
			o.set(kt.(string), v)
		}
		_, err := d.Token()
		return o, err
	case json.Delim('['):
		a := []any{}
		for d.More() {
			v, err := decodeValue(d, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := d.Token()
		return a, err
	}
	return tok, nil
}

// encode writes v as compact JSON, object keys in their order.
func encode(v any) []byte {
	var b bytes.Buffer
	encodeTo(&b, v)
	return b.Bytes()
}

func encodeTo(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case *object:
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			encodeTo(b, v.vals[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			encodeTo(b, x)
		}
		b.WriteByte(']')
	case string:
		writeString(b, v)
	case json.Number:
		b.WriteString(v.String())
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case nil:
		b.WriteString("null")
	default:
		data, _ := json.Marshal(v)
		b.Write(data)
	}
}

func writeString(b *bytes.Buffer, s string) {
	data, _ := json.Marshal(s)
	b.Write(data)
}

// text renders v compactly for a description, shortened to 200 bytes.
func text(v any) string {
	s := string(encode(v))
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}

// ptr appends a token to a JSON Pointer.
func ptr(base string, tok ...string) string {
	for _, t := range tok {
		t = strings.ReplaceAll(t, "~", "~0")
		base += "/" + strings.ReplaceAll(t, "/", "~1")
	}
	return base
}

// unptr decodes one JSON Pointer token.
func unptr(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}

package argcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/jsontree"
)

// maxDepth bounds the nesting of a schema and of arguments.
const maxDepth = 256

// A Schema is a compiled JSON Schema. Build one with Compile.
type Schema struct {
	root *node
	// ignored lists what the checker accepts without checking, as JSON
	// Pointers into the schema with the reason.
	ignored []string
}

// Ignored lists the parts of the schema the checker cannot apply and so
// accepts any value for (a pattern Go cannot compile, a $ref it cannot
// resolve, unevaluatedProperties), each as "pointer: reason".
func (s *Schema) Ignored() []string { return append([]string(nil), s.ignored...) }

// A node is one compiled schema.
type node struct {
	path string // JSON Pointer in the schema document
	// always is set for a boolean schema (or {} / a schema only of
	// annotations): true accepts all, false nothing.
	always *bool

	types      []string
	enum       []any
	hasEnum    bool
	constVal   any
	hasConst   bool
	multipleOf *number
	minimum    *number
	maximum    *number
	exclMin    *number
	exclMax    *number
	minLength  int // -1: none
	maxLength  int
	pattern    *regexp.Regexp
	patternSrc string

	minItems, maxItems       int
	uniqueItems              bool
	contains                 *node
	minContains, maxContains int
	prefixItems              []*node
	items                    *node // every item after prefixItems

	minProps, maxProps int
	required           []string
	propNames          []string // properties, in schema order
	properties         map[string]*node
	patternProps       []patternProp
	additional         *node
	propertyNames      *node
	dependentRequired  map[string][]string
	dependentSchemas   map[string]*node

	allOf, anyOf, oneOf []*node
	not                 *node
	ifNode, then, els   *node

	// uncertain is set when the node or one below it has a keyword the
	// checker cannot apply: it may accept what it should refuse, so
	// "not", "if" and a oneOf that matched twice cannot rely on it.
	uncertain  bool
	ownIgnored bool

	ref    string // $ref as written
	refTo  *node  // resolved
	refAll bool   // draft-07: $ref replaces every sibling keyword
}

type patternProp struct {
	re  *regexp.Regexp
	sub *node
}

// number is a JSON number kept both as written and as float64.
type number struct {
	text string
	f    float64
}

// draft is the dialect of a schema document.
type draft int

const (
	draft2020 draft = iota
	draft7          // draft-07 and older: $ref ignores its siblings
)

// compiler holds the state of one Compile.
type compiler struct {
	doc     any
	draft   draft
	byPath  map[string]*node            // compiled nodes by pointer
	ids     map[string]any              // absolute URI (no fragment) or URI#anchor → schema value
	idPath  map[*jsontree.Object]string // schema object → its pointer
	pending []*node                     // nodes with a $ref to resolve
	bases   map[*node]string            // base URI of each node with a $ref
	ignored []string
	// ignoredAt are the paths of the nodes whose keywords were ignored.
	ignoredAt []string
}

// A CompileError reports a schema that is not JSON or nests too deep.
type CompileError struct {
	Err error
}

func (e *CompileError) Error() string { return "argcheck: schema: " + e.Err.Error() }
func (e *CompileError) Unwrap() error { return e.Err }

// Compile reads a JSON Schema. Only JSON that is not a schema at all (not
// JSON, or nested deeper than 256) is an error; keywords it cannot apply
// are listed by Ignored and accept every value.
func Compile(schema json.RawMessage) (*Schema, error) {
	doc, err := jsontree.Parse(bytes.TrimSpace(schema), maxDepth)
	if err != nil {
		return nil, &CompileError{Err: err}
	}
	c := &compiler{doc: doc, byPath: map[string]*node{}, ids: map[string]any{}, idPath: map[*jsontree.Object]string{}, bases: map[*node]string{}}
	if o, ok := doc.(*jsontree.Object); ok {
		if s, ok := o.Str("$schema"); ok && legacyDraft(s) {
			c.draft = draft7
		}
	}
	const rootBase = "urn:argcheck:root"
	c.collectIDs(doc, rootBase, "")
	root := c.node(doc, "", rootBase)
	for i := 0; i < len(c.pending); i++ {
		c.resolve(c.pending[i])
	}
	for _, p := range c.ignoredAt {
		if n := c.byPath[p]; n != nil {
			n.ownIgnored = true
		}
	}
	seen := map[*node]bool{}
	for _, n := range c.byPath {
		markUncertain(n, seen)
	}
	return &Schema{root: root, ignored: c.ignored}, nil
}

// legacyDraft reports whether a $schema names draft-07 or older.
func legacyDraft(s string) bool {
	for _, d := range []string{"draft-07", "draft-06", "draft-04", "draft-03"} {
		if strings.Contains(s, d) {
			return true
		}
	}
	return false
}

func (c *compiler) ignore(path, format string, args ...any) {
	c.ignoredAt = append(c.ignoredAt, path)
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		c.ignoredAt = append(c.ignoredAt, path[:i])
	}
	p := path
	if p == "" {
		p = "(root)"
	}
	c.ignored = append(c.ignored, p+": "+fmt.Sprintf(format, args...))
}

// collectIDs records every $id and $anchor under v, resolved against base.
func (c *compiler) collectIDs(v any, base, path string) {
	o, ok := v.(*jsontree.Object)
	if !ok {
		if a, ok := v.([]any); ok {
			for i, x := range a {
				c.collectIDs(x, base, path+"/"+itoa(i))
			}
		}
		return
	}
	c.idPath[o] = path
	if path == "" {
		c.ids[base] = o
	}
	_, isRef := o.Get("$ref")
	if id, ok := o.Str("$id"); ok && !(c.draft == draft7 && isRef) {
		if strings.HasPrefix(id, "#") && len(id) > 1 { // draft-07 anchor form
			c.ids[stripFragment(base)+id] = o
		} else if u := resolveURI(base, id); u != "" {
			base = stripFragment(u)
			c.ids[base] = o
		}
	}
	if a, ok := o.Str("$anchor"); ok {
		c.ids[stripFragment(base)+"#"+a] = o
	}
	for _, k := range o.Keys {
		switch k {
		case "enum", "const", "default", "examples", "required":
			continue // values, not schemas
		}
		c.collectIDs(o.Vals[k], base, path+"/"+escape(k))
	}
}

func stripFragment(u string) string {
	if i := strings.IndexByte(u, '#'); i >= 0 {
		return u[:i]
	}
	return u
}

// resolveURI resolves ref against base; "" when either does not parse.
func resolveURI(base, ref string) string {
	b, err := url.Parse(base)
	if err != nil {
		return ""
	}
	r, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	return b.ResolveReference(r).String()
}

// node compiles the schema value v at path; base is its base URI.
func (c *compiler) node(v any, path, base string) *node {
	if n, ok := c.byPath[path]; ok {
		return n
	}
	n := &node{path: path, minLength: -1, maxLength: -1, minItems: -1, maxItems: -1,
		minContains: -1, maxContains: -1, minProps: -1, maxProps: -1}
	c.byPath[path] = n
	switch v := v.(type) {
	case bool:
		n.always = &v
		return n
	case *jsontree.Object:
		c.object(n, v, path, base)
	default:
		c.ignore(path, "a schema that is neither an object nor a boolean")
		t := true
		n.always = &t
	}
	return n
}

func (c *compiler) object(n *node, o *jsontree.Object, path, base string) {
	if id, ok := o.Str("$id"); ok && !strings.HasPrefix(id, "#") {
		if _, isRef := o.Get("$ref"); !(c.draft == draft7 && isRef) {
			if u := resolveURI(base, id); u != "" {
				base = stripFragment(u)
			}
		}
	}
	sub := func(k string, v any) *node { return c.node(v, path+"/"+escape(k), base) }
	subList := func(k string, v any) []*node {
		a, ok := v.([]any)
		if !ok {
			c.ignore(path+"/"+escape(k), "not an array of schemas")
			return nil
		}
		out := make([]*node, len(a))
		for i, x := range a {
			out[i] = c.node(x, path+"/"+escape(k)+"/"+itoa(i), base)
		}
		return out
	}
	for _, k := range o.Keys {
		v := o.Vals[k]
		kp := path + "/" + escape(k)
		switch k {
		case "$ref":
			if s, ok := v.(string); ok {
				n.ref = s
				n.refAll = c.draft == draft7
				c.pending = append(c.pending, n)
				c.bases[n] = base
			}
		case "type":
			n.types = c.types(v, kp)
		case "enum":
			if a, ok := v.([]any); ok {
				n.enum, n.hasEnum = a, true
			}
		case "const":
			n.constVal, n.hasConst = v, true
		case "multipleOf":
			if x := num(v); x != nil && x.f > 0 {
				n.multipleOf = x
			}
		case "minimum":
			n.minimum = num(v)
		case "maximum":
			n.maximum = num(v)
		case "exclusiveMinimum":
			if b, ok := v.(bool); ok { // draft-04
				if b {
					n.exclMin = num(o.Vals["minimum"])
					n.minimum = nil
				}
			} else {
				n.exclMin = num(v)
			}
		case "exclusiveMaximum":
			if b, ok := v.(bool); ok {
				if b {
					n.exclMax = num(o.Vals["maximum"])
					n.maximum = nil
				}
			} else {
				n.exclMax = num(v)
			}
		case "minLength":
			n.minLength = count(v)
		case "maxLength":
			n.maxLength = count(v)
		case "pattern":
			if s, ok := v.(string); ok {
				if re, err := compilePattern(s); err == nil {
					n.pattern, n.patternSrc = re, s
				} else {
					c.ignore(kp, "pattern not checked: %v", err)
				}
			}
		case "minItems":
			n.minItems = count(v)
		case "maxItems":
			n.maxItems = count(v)
		case "uniqueItems":
			n.uniqueItems = v == true
		case "contains":
			n.contains = sub(k, v)
		case "minContains":
			n.minContains = count(v)
		case "maxContains":
			n.maxContains = count(v)
		case "prefixItems":
			n.prefixItems = subList(k, v)
		case "items":
			if _, isList := v.([]any); isList {
				n.prefixItems = subList(k, v) // draft-07 tuple
				if ai, ok := o.Get("additionalItems"); ok {
					n.items = c.node(ai, path+"/additionalItems", base)
				}
			} else {
				n.items = sub(k, v)
			}
		case "minProperties":
			n.minProps = count(v)
		case "maxProperties":
			n.maxProps = count(v)
		case "required":
			if a, ok := v.([]any); ok {
				for _, x := range a {
					if s, ok := x.(string); ok {
						n.required = append(n.required, s)
					}
				}
			}
		case "properties":
			if p, ok := v.(*jsontree.Object); ok {
				n.properties = make(map[string]*node, len(p.Keys))
				for _, name := range p.Keys {
					n.propNames = append(n.propNames, name)
					n.properties[name] = c.node(p.Vals[name], kp+"/"+escape(name), base)
				}
			}
		case "patternProperties":
			if p, ok := v.(*jsontree.Object); ok {
				for _, pat := range p.Keys {
					re, err := compilePattern(pat)
					if err != nil {
						c.ignore(kp+"/"+escape(pat), "pattern not checked: %v", err)
						continue
					}
					n.patternProps = append(n.patternProps, patternProp{re: re, sub: c.node(p.Vals[pat], kp+"/"+escape(pat), base)})
				}
			}
		case "additionalProperties":
			n.additional = sub(k, v)
		case "propertyNames":
			n.propertyNames = sub(k, v)
		case "dependentRequired":
			n.dependentRequired = c.depRequired(n.dependentRequired, v)
		case "dependentSchemas":
			n.dependentSchemas = c.depSchemas(n.dependentSchemas, v, kp, base)
		case "dependencies":
			if p, ok := v.(*jsontree.Object); ok {
				for _, name := range p.Keys {
					if _, isList := p.Vals[name].([]any); isList {
						one := jsontree.New()
						one.Set(name, p.Vals[name])
						n.dependentRequired = c.depRequired(n.dependentRequired, one)
					} else {
						if n.dependentSchemas == nil {
							n.dependentSchemas = map[string]*node{}
						}
						n.dependentSchemas[name] = c.node(p.Vals[name], kp+"/"+escape(name), base)
					}
				}
			}
		case "allOf":
			n.allOf = subList(k, v)
		case "anyOf":
			n.anyOf = subList(k, v)
		case "oneOf":
			n.oneOf = subList(k, v)
		case "not":
			n.not = sub(k, v)
		case "if":
			n.ifNode = sub(k, v)
		case "then":
			n.then = sub(k, v)
		case "else":
			n.els = sub(k, v)
		case "$dynamicRef", "$recursiveRef", "unevaluatedProperties", "unevaluatedItems":
			c.ignore(kp, "%s not checked", k)
		case "$defs", "definitions":
			if d, ok := v.(*jsontree.Object); ok {
				for _, name := range d.Keys {
					c.node(d.Vals[name], kp+"/"+escape(name), base)
				}
			}
		}
	}
	if n.ifNode == nil {
		n.then, n.els = nil, nil
	}
}

// types reads "type": a name or a list of names.
func (c *compiler) types(v any, path string) []string {
	known := func(s string) bool {
		switch s {
		case "string", "number", "integer", "boolean", "object", "array", "null":
			return true
		}
		return false
	}
	switch v := v.(type) {
	case string:
		if known(v) {
			return []string{v}
		}
	case []any:
		var out []string
		for _, x := range v {
			s, ok := x.(string)
			if !ok || !known(s) {
				c.ignore(path, "type %v not checked", v)
				return nil
			}
			out = append(out, s)
		}
		return out
	}
	c.ignore(path, "type %v not checked", v)
	return nil
}

func (c *compiler) depRequired(m map[string][]string, v any) map[string][]string {
	p, ok := v.(*jsontree.Object)
	if !ok {
		return m
	}
	for _, name := range p.Keys {
		a, ok := p.Vals[name].([]any)
		if !ok {
			continue
		}
		if m == nil {
			m = map[string][]string{}
		}
		for _, x := range a {
			if s, ok := x.(string); ok {
				m[name] = append(m[name], s)
			}
		}
	}
	return m
}

func (c *compiler) depSchemas(m map[string]*node, v any, path, base string) map[string]*node {
	p, ok := v.(*jsontree.Object)
	if !ok {
		return m
	}
	if m == nil {
		m = map[string]*node{}
	}
	for _, name := range p.Keys {
		m[name] = c.node(p.Vals[name], path+"/"+escape(name), base)
	}
	return m
}

// resolve finds what n's $ref points at, compiling it if needed.
func (c *compiler) resolve(n *node) {
	base := c.bases[n]
	abs := resolveURI(base, n.ref)
	if abs == "" {
		c.ignore(n.path+"/$ref", "$ref %q does not parse", n.ref)
		return
	}
	doc, frag, _ := strings.Cut(abs, "#")
	target, ok := c.ids[abs]
	if !ok {
		res, found := c.ids[doc]
		if !found {
			c.ignore(n.path+"/$ref", "$ref %q is outside the schema", n.ref)
			return
		}
		frag, err := url.PathUnescape(frag)
		if err != nil {
			c.ignore(n.path+"/$ref", "$ref %q: %v", n.ref, err)
			return
		}
		if frag != "" && !strings.HasPrefix(frag, "/") {
			c.ignore(n.path+"/$ref", "$ref %q names no anchor of the schema", n.ref)
			return
		}
		target, ok = pointer(res, frag)
		if !ok {
			c.ignore(n.path+"/$ref", "$ref %q does not resolve", n.ref)
			return
		}
	}
	var path string
	known := false
	if o, isObj := target.(*jsontree.Object); isObj {
		path, known = c.idPath[o]
	}
	if !known {
		// A pointer into a value that is not an object schema (a
		// boolean schema, or through an array): compile it where it is.
		path = n.path + "/$ref"
	}
	n.refTo = c.node(target, path, base)
}

// pointer resolves a JSON Pointer ("" or "/a/b") in v.
func pointer(v any, p string) (any, bool) {
	if p == "" {
		return v, true
	}
	for _, tok := range strings.Split(p[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := v.(type) {
		case *jsontree.Object:
			x, ok := c.Get(tok)
			if !ok {
				return nil, false
			}
			v = x
		case []any:
			i, ok := atoi(tok)
			if !ok || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// num reads a JSON number; nil when v is none.
func num(v any) *number {
	n, ok := v.(json.Number)
	if !ok {
		return nil
	}
	f, err := n.Float64()
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil
	}
	if math.IsNaN(f) {
		return nil
	}
	return &number{text: n.String(), f: f}
}

// count reads a non-negative integer keyword; -1 when it is none.
func count(v any) int {
	x := num(v)
	if x == nil || x.f < 0 || x.f != math.Trunc(x.f) {
		return -1
	}
	if x.f > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(x.f)
}

// compilePattern compiles an ECMA-262 regular expression as far as Go's
// RE2 syntax shares it.
func compilePattern(p string) (*regexp.Regexp, error) {
	if len(p) > 4096 {
		return nil, errors.New("pattern longer than 4096 bytes")
	}
	return regexp.Compile(p)
}

func escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

func itoa(i int) string { return fmt.Sprint(i) }

func atoi(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, false
		}
		n = n*10 + int(r-'0')
	}
	return n, true
}

// markUncertain sets n.uncertain when n or a node it reaches ignores a
// keyword; it returns n.uncertain.
func markUncertain(n *node, seen map[*node]bool) bool {
	if n == nil {
		return false
	}
	if seen[n] {
		return n.uncertain
	}
	seen[n] = true
	u := n.ownIgnored
	for _, c := range n.children() {
		if markUncertain(c, seen) {
			u = true
		}
	}
	n.uncertain = u
	return u
}

// children lists the nodes below n, its $ref target included.
func (n *node) children() []*node {
	out := []*node{n.contains, n.items, n.additional, n.propertyNames, n.not, n.ifNode, n.then, n.els, n.refTo}
	out = append(out, n.prefixItems...)
	out = append(out, n.allOf...)
	out = append(out, n.anyOf...)
	out = append(out, n.oneOf...)
	for _, p := range n.properties {
		out = append(out, p)
	}
	for _, p := range n.patternProps {
		out = append(out, p.sub)
	}
	for _, d := range n.dependentSchemas {
		out = append(out, d)
	}
	return out
}

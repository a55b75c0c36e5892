package schemaprofile

import "strings"

// inliner replaces local $refs by copies of what they point at.
type inliner struct {
	t *transform
	// root is the document the pointers resolve against.
	root *object
	// maxRepeat is how often one $ref may be expanded inside itself.
	maxRepeat int
	// recursive is set when a $ref was cut for recursion.
	recursive bool
	// cut is what a cut $ref becomes.
	cut func(ref string) *object
}

// inline returns root with every local $ref inlined, $defs and
// definitions removed.
func (in *inliner) inline(root *object) *object {
	out := in.node(root, "", nil).(*object)
	out.Del("$defs")
	out.Del("definitions")
	return out
}

func (in *inliner) node(v any, path string, stack []string) any {
	o, ok := v.(*object)
	if !ok {
		return v
	}
	in.t.nodes++
	if in.t.nodes > maxNodes {
		if !in.t.truncated {
			in.t.truncated = true
			in.t.note(RuleTruncated, path, "more than %d schema nodes after inlining $refs: the rest is {}", maxNodes)
		}
		return newObject()
	}
	if ref, ok := o.Str("$ref"); ok {
		return in.ref(o, ref, path, stack)
	}
	o = o.Clone()
	eachSub(o, path, func(sub any, p string) any {
		if strings.HasPrefix(p, "/$defs/") || strings.HasPrefix(p, "/definitions/") {
			if strings.Count(p, "/") == 2 && path == "" {
				return sub // definitions are inlined where used
			}
		}
		return in.node(sub, p, stack)
	})
	return o
}

func (in *inliner) ref(o *object, ref, path string, stack []string) any {
	target, tpath, ok := in.resolve(ref)
	if !ok {
		in.t.note(RuleDropped, ptr(path, "$ref"), "$ref %q does not resolve in this schema", short(ref, 80))
		c := o.Clone()
		c.Del("$ref")
		return in.node(c, path, stack)
	}
	n := 0
	for _, s := range stack {
		if s == ref {
			n++
		}
	}
	if n >= in.maxRepeat {
		in.recursive = true
		in.t.note(RuleRecursionCut, path, "recursive $ref %q not expanded further", short(ref, 80))
		return in.cut(ref)
	}
	in.t.note(RuleRefInlined, path, "$ref %q", short(ref, 80))
	var merged *object
	if to, ok := target.(*object); ok {
		merged = to.Clone()
	} else {
		merged, _ = asObject(target)
		if merged == nil {
			merged = newObject()
		}
	}
	merged.Del("$defs")
	merged.Del("definitions")
	for _, k := range o.Keys {
		if k != "$ref" {
			merged.Set(k, cloneValue(o.Vals[k])) // siblings of $ref win
		}
	}
	return in.node(merged, tpath, append(stack[:len(stack):len(stack)], ref))
}

// resolve finds a local reference ("#" or "#/json/pointer").
func (in *inliner) resolve(ref string) (any, string, bool) {
	if !strings.HasPrefix(ref, "#") {
		return nil, "", false
	}
	frag := ref[1:]
	if frag == "" {
		return in.root, "", true
	}
	if !strings.HasPrefix(frag, "/") {
		return nil, "", false
	}
	frag = strings.ReplaceAll(frag, "%25", "%") // the common percent-escape
	var cur any = in.root
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = unptr(tok)
		switch c := cur.(type) {
		case *object:
			v, ok := c.Get(tok)
			if !ok {
				return nil, "", false
			}
			cur = v
		case []any:
			i, ok := atoi(tok)
			if !ok || i >= len(c) {
				return nil, "", false
			}
			cur = c[i]
		default:
			return nil, "", false
		}
	}
	return cur, frag, true
}

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

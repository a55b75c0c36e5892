package eino

import (
	"net/url"
	"strconv"
	"strings"
)

// $ref rewriting: references into draft-07 "definitions" and other
// resources, translated to where normalize moved what they point at.

// withoutFragment returns u as text without its fragment.
func withoutFragment(u *url.URL) string {
	c := *u
	c.Fragment, c.RawFragment = "", ""
	return c.String()
}

// rewriteRef translates a $ref written against the input into one against
// the normalised schema. Only JSON Pointer fragments into schemas of this
// document change; anchors and other documents are left as they are.
func (n *normalizer) rewriteRef(ref string, resource *object, base *url.URL) string {
	i := strings.IndexByte(ref, '#')
	if i < 0 {
		return ref
	}
	frag := ref[i+1:]
	if !strings.HasPrefix(frag, "/") {
		return ref
	}
	if i > 0 {
		u, err := url.Parse(ref)
		if err != nil {
			return ref
		}
		r, ok := n.resources[withoutFragment(base.ResolveReference(u))]
		if !ok {
			return ref
		}
		resource = r
	}
	return ref[:i+1] + n.translate(resource, frag)
}

// translate maps the JSON Pointer fragment frag (percent-encoded, starting
// with "/") from input coordinates to normalised ones, starting at root.
func (n *normalizer) translate(root *object, frag string) string {
	raw := strings.Split(frag[1:], "/")
	out := append([]string(nil), raw...)
	var cur any = root
	for i := 0; i < len(raw); {
		o, ok := cur.(*object)
		if !ok {
			break
		}
		tok, ok := decodeToken(raw[i])
		if !ok {
			break
		}
		kw := tok
		if rn := n.renames[o]; rn != nil {
			if nu, ok := rn[tok]; ok {
				kw = nu
			} else if tok == "dependencies" && i+1 < len(raw) {
				if name, ok := decodeToken(raw[i+1]); ok {
					if nu, ok := rn["dependencies\x00"+name]; ok {
						kw = nu
					}
				}
			}
		}
		if kw != tok {
			out[i] = kw // a keyword: no escaping needed
		}
		v, ok := o.Vals[kw]
		if !ok {
			break
		}
		k, eino := einoKeywords[kw]
		if !eino {
			k = otherSubschemas[kw]
		}
		switch k {
		case kSchema:
			cur = v
			i++
		case kSchemaArray:
			a, ok := v.([]any)
			if !ok || i+1 >= len(raw) {
				return "/" + strings.Join(out, "/")
			}
			idx, err := strconv.Atoi(raw[i+1])
			if err != nil || idx < 0 || idx >= len(a) {
				return "/" + strings.Join(out, "/")
			}
			cur = a[idx]
			i += 2
		case kSchemaMap, kProperties:
			m, ok := v.(*object)
			if !ok || i+1 >= len(raw) {
				return "/" + strings.Join(out, "/")
			}
			name, ok := decodeToken(raw[i+1])
			if !ok {
				return "/" + strings.Join(out, "/")
			}
			cur = m.Vals[name]
			i += 2
		default:
			return "/" + strings.Join(out, "/")
		}
	}
	return "/" + strings.Join(out, "/")
}

// decodeToken percent-decodes and unescapes one JSON Pointer token of a
// URI fragment.
func decodeToken(s string) (string, bool) {
	u, err := url.PathUnescape(s)
	if err != nil {
		return "", false
	}
	return strings.ReplaceAll(strings.ReplaceAll(u, "~1", "/"), "~0", "~"), true
}

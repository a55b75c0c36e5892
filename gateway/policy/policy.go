// Package policy is a gateway.Policy written as a document: rules that
// allow or deny a gateway's tools, prompts, resources and resource
// templates per principal and per scope of the principal's token.
//
//	{
//	  "default": "deny",
//	  "rules": [
//	    {"allow": ["tool:files/read_*", "prompt:*/*"]},
//	    {"principals": ["alice", "ci-*"], "allow": ["github/*"], "deny": ["github/delete_*"]},
//	    {"scopes": ["mcp:admin"], "allow": ["*/*"]}
//	  ]
//	}
//
// A rule applies to a request when its principals match the request's
// principal (none listed: every principal) and the request's token has all
// its scopes (gateway.TokenInfoFrom). An item is refused when an applicable
// rule denies it, else allowed when one allows it, else the default says
// ("deny" unless "allow"). A pattern is [KIND:]SERVER/NAME: KIND one of
// tool, prompt, resource, resourceTemplate (none: all kinds), SERVER the
// server's name in the gateway's config, NAME the server's own name of the
// item (a resource's URI); "*" matches any run of characters, "/" too.
//
// Lists and plain deny-wins rules were chosen over an expression
// language (CEL, expr): what a principal may use is then read from the
// document, every rule is checked when it is parsed, and nothing runs per
// request but string matching.
package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/mcpadapter/mcpadapter/gateway"
)

// Kinds of items, as gateway.Policy names them.
var kinds = []string{"tool", "prompt", "resource", "resourceTemplate"}

// A Document is the JSON form of a Policy.
type Document struct {
	// Default is "deny" (the default) or "allow": what an item no rule
	// speaks of gets.
	Default string `json:"default,omitempty"`
	Rules   []Rule `json:"rules"`
}

// A Rule allows and denies items to the principals it applies to.
type Rule struct {
	// Principals are the principals the rule applies to ("*" in one
	// matches any run of characters); none means every principal.
	Principals []string `json:"principals,omitempty"`
	// Scopes must all be scopes of the principal's token.
	Scopes []string `json:"scopes,omitempty"`
	// Allow and Deny are patterns [KIND:]SERVER/NAME.
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// A Policy decides with the rules of a Document. It implements
// gateway.Policy.
type Policy struct {
	allowByDefault bool
	rules          []rule
}

type rule struct {
	principals  []string
	scopes      []string
	allow, deny []pattern
}

type pattern struct {
	kind         string // "" for all
	server, name string
}

// maxFileBytes bounds a policy file: far above any real one.
const maxFileBytes = 4 << 20

// Load reads a Policy from a JSON file: a regular file (a link to
// /dev/zero, a pipe or a device is refused before it is opened) of at
// most 4 MiB.
func Load(path string) (*Policy, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	p, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", path, err)
	}
	return p, nil
}

// Parse reads a Policy from a JSON Document, refusing unknown members and
// patterns that cannot match, every problem listed.
func Parse(data []byte) (*Policy, error) {
	var d Document
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	return New(&d)
}

// New makes a Policy of a Document.
func New(d *Document) (*Policy, error) {
	var errs []error
	p := &Policy{}
	switch d.Default {
	case "", "deny":
	case "allow":
		p.allowByDefault = true
	default:
		errs = append(errs, fmt.Errorf(`default %q: want "allow" or "deny"`, d.Default))
	}
	for i, r := range d.Rules {
		pr := rule{principals: r.Principals, scopes: r.Scopes}
		if len(r.Allow) == 0 && len(r.Deny) == 0 {
			errs = append(errs, fmt.Errorf("rules[%d] allows and denies nothing", i))
		}
		for _, s := range r.Principals {
			if s == "" {
				errs = append(errs, fmt.Errorf("rules[%d].principals has an empty name", i))
			}
		}
		for _, list := range []struct {
			name string
			in   []string
			out  *[]pattern
		}{{"allow", r.Allow, &pr.allow}, {"deny", r.Deny, &pr.deny}} {
			for j, s := range list.in {
				pt, err := parsePattern(s)
				if err != nil {
					errs = append(errs, fmt.Errorf("rules[%d].%s[%d]: %w", i, list.name, j, err))
					continue
				}
				*list.out = append(*list.out, pt)
			}
		}
		p.rules = append(p.rules, pr)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

// readFile reads the file at path, refusing what is not a regular file or
// is over maxFileBytes.
func readFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > maxFileBytes {
		return nil, fmt.Errorf("%s is over %d MiB: not a policy file", path, maxFileBytes>>20)
	}
	return b, nil
}

func parsePattern(s string) (pattern, error) {
	var pt pattern
	rest := s
	if k, r, ok := strings.Cut(s, ":"); ok && !strings.Contains(k, "/") {
		if !slices.Contains(kinds, k) {
			return pt, fmt.Errorf("%q: kind %q is not one of %s", s, k, strings.Join(kinds, ", "))
		}
		pt.kind, rest = k, r
	}
	server, name, ok := strings.Cut(rest, "/")
	if !ok || server == "" || name == "" {
		return pt, fmt.Errorf("%q: want [KIND:]SERVER/NAME", s)
	}
	pt.server, pt.name = server, name
	return pt, nil
}

// Allow reports whether principal may use the item of kind that server
// knows as name (gateway.Policy).
func (p *Policy) Allow(ctx context.Context, principal, server, kind, name string) bool {
	var scopes []string
	if ti := gateway.TokenInfoFrom(ctx); ti != nil && ti.UserID == principal {
		scopes = ti.Scopes
	}
	allowed := false
	for i := range p.rules {
		r := &p.rules[i]
		if !r.applies(principal, scopes) {
			continue
		}
		for _, pt := range r.deny {
			if pt.matches(server, kind, name) {
				return false
			}
		}
		if !allowed {
			for _, pt := range r.allow {
				if pt.matches(server, kind, name) {
					allowed = true
					break
				}
			}
		}
	}
	return allowed || p.allowByDefault
}

func (r *rule) applies(principal string, scopes []string) bool {
	if len(r.principals) > 0 && !slices.ContainsFunc(r.principals, func(g string) bool { return glob(g, principal) }) {
		return false
	}
	for _, s := range r.scopes {
		if !slices.Contains(scopes, s) {
			return false
		}
	}
	return true
}

func (pt *pattern) matches(server, kind, name string) bool {
	return (pt.kind == "" || pt.kind == kind) && glob(pt.server, server) && glob(pt.name, name)
}

// glob reports whether s matches pattern, where "*" matches any run of
// characters and everything else itself.
func glob(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}

var _ gateway.Policy = (*Policy)(nil)

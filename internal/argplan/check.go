package argplan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/mcpadapter/mcpadapter/argcheck"
)

// Checker checks a model's arguments against the server's own input
// schema before a call sends them. The schema is compiled at the first
// check and the compiled form reused; a schema the checker cannot read
// (not JSON) checks nothing, and the server judges the call.
type Checker struct {
	schema json.RawMessage // the server's input schema, before transforms
	once   sync.Once
	s      *argcheck.Schema
}

// NewChecker returns the Checker of the server's input schema.
func NewChecker(schema json.RawMessage) *Checker { return &Checker{schema: schema} }

func (c *Checker) compiled() *argcheck.Schema {
	c.once.Do(func() { c.s, _ = argcheck.Compile(c.schema) })
	return c.s
}

// Check returns the error text for the model when args (the server's
// arguments, after plan's transforms) break the schema of tool, or "".
// Each argument is named as the model named it: plan's renames given
// back, then modelPath, if set, maps the path to the one the model
// wrote. A nil Checker checks nothing.
func (c *Checker) Check(tool string, args json.RawMessage, plan *Plan, modelPath func(string) string) string {
	if c == nil {
		return ""
	}
	if a := bytes.TrimSpace(args); len(a) > 0 && a[0] != '{' {
		return "" // not a JSON object: the call's own check answers it
	}
	s := c.compiled()
	if s == nil {
		return ""
	}
	err := s.Validate(args)
	var e *argcheck.Error
	if !errors.As(err, &e) {
		return "" // not a JSON object: the call's own check answers it
	}
	return message(tool, e, plan.ModelNames(), modelPath)
}

// message writes the model's tool error for invalid arguments: each
// problem on its own line, by JSON path, named as the model named the
// arguments (modelName maps a server's argument name back, then
// modelPath, if set, maps the path to the one the model wrote).
func message(tool string, e *argcheck.Error, modelName map[string]string, modelPath func(string) string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Invalid arguments for tool %q; the call was not made.", tool)
	for _, p := range e.Problems {
		if len(modelName) > 0 && p.Path != "" {
			first, rest, _ := strings.Cut(p.Path[1:], "/")
			if m, ok := modelName[first]; ok {
				p.Path = "/" + m
				if rest != "" {
					p.Path += "/" + rest
				}
			}
		}
		if modelPath != nil {
			p.Path = modelPath(p.Path)
		}
		b.WriteString("\n- " + p.String())
	}
	if e.Truncated > 0 {
		fmt.Fprintf(&b, "\n- and %d more", e.Truncated)
	}
	b.WriteString("\nFix these and call the tool again.")
	return b.String()
}

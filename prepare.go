package mcpadapter

import (
	"fmt"
	"slices"
)

// NoToolsError reports a server that offers no tools, with
// Options.RequireTools set: usually the wrong URL path, wrong credentials
// or a misconfigured server.
type NoToolsError struct {
	// Server names the server.
	Server string
	// Listed is how many tools the server listed, all of them left out
	// by filters or transforms; 0 means it listed none.
	Listed int
}

func (e *NoToolsError) Error() string {
	if e.Listed == 0 {
		return fmt.Sprintf("mcpadapter: server %q lists no tools (is the URL, the command or the credential right?)", e.Server)
	}
	return fmt.Sprintf("mcpadapter: server %q: includeTools, excludeTools and \"enabled\": false leave none of its %d tools", e.Server, e.Listed)
}

// prepare turns one server's listing into its tools for a model: the
// config's includeTools and excludeTools, then the transforms. A server
// left with no tools is logged as a warning, or is a *NoToolsError with
// Options.RequireTools.
func (a *Adapter) prepare(c *Client, listed []*Tool) ([]*Tool, error) {
	sh := a.shapes[c]
	f := a.group.filters[c]
	kept := make([]*Tool, 0, len(listed))
	for _, t := range listed {
		if !f.keep(t.OriginalName) || sh.Disabled(t.OriginalName) || !a.opts.AppTools && !t.ModelVisible() {
			continue // filtered out, or an MCP Apps tool for the app only (apps.go)
		}
		if err := applyShape(sh, t); err != nil {
			return nil, err
		}
		t.soft = a.opts.TransportErrorsAsResults
		if t.maxResult == 0 {
			t.maxResult = a.opts.resultLimit()
		}
		kept = append(kept, t)
	}
	for _, path := range sh.Unmatched(func(name string) bool {
		return slices.ContainsFunc(listed, func(t *Tool) bool { return t.OriginalName == name })
	}) {
		c.log.Warn("a tool transform names a tool the server does not list", "at", path)
	}
	if len(kept) > 0 {
		return kept, nil
	}
	if len(listed) == 0 {
		c.log.Warn("server lists no tools: check its URL or command, its credentials and its configuration")
	} else {
		c.log.Warn("filters leave none of the server's tools", "listed", len(listed))
	}
	if a.opts.RequireTools {
		return nil, &NoToolsError{Server: c.name, Listed: len(listed)}
	}
	return kept, nil
}

// prefixOf returns the prefix of t's model-facing name: its server's own
// prefix if it has one, else the server's name or nothing, as
// Options.Prefix says.
func (a *Adapter) prefixOf(t *Tool) string {
	if sh := a.shapes[t.client]; sh != nil && sh.Prefix != "" {
		return sh.Prefix
	}
	switch a.opts.Prefix {
	case PrefixAlways:
		return t.Server
	case PrefixNever:
		return ""
	}
	if len(a.group.clients) > 1 {
		return t.Server
	}
	return ""
}

// NameCollisionError reports two tools that would be shown to a model under
// the same name. Nothing is overwritten: listing fails until one of them is
// renamed or filtered out. Two tools of one server (a server that lists a
// name twice) fail that server only: see Adapter.Tools.
type NameCollisionError struct {
	// Name is the contested model-facing name.
	Name string
	// First and Second are the two tools, as "server/tool".
	First, Second string
}

func (e *NameCollisionError) Error() string {
	if e.First == e.Second {
		return fmt.Sprintf("mcpadapter: tool name %q: the server lists %s twice; filter one of them out", e.Name, e.First)
	}
	return fmt.Sprintf("mcpadapter: tool name %q is claimed by both %s and %s; rename a server or filter one of the tools out", e.Name, e.First, e.Second)
}

package mcpadapter

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// maxToolName is the longest tool name model APIs accept.
const maxToolName = 64

// modelToolName returns the name to show a model for a tool: prefix and
// name joined with "_" (no prefix for a single server), with every byte
// outside [A-Za-z0-9_-] replaced by "_". A name that had to be changed so,
// or that is longer than 64 bytes, ends with "_" and 8 hex digits of a
// SHA-256 of the full name (cut to fit 64 bytes first): the result is
// stable across runs, and names that sanitise alike (天気 and 予報 are both
// "______") or share their first 55 bytes stay distinct.
func modelToolName(prefix, name string) string {
	full := name
	if prefix != "" {
		full = prefix + "_" + name
	}
	b := []byte(full)
	changed := len(b) == 0
	for i, c := range b {
		if !isNameByte(c) {
			b[i] = '_'
			changed = true
		}
	}
	if !changed && len(b) <= maxToolName {
		return string(b)
	}
	sum := sha256.Sum256([]byte(full))
	return string(b[:min(len(b), maxToolName-9)]) + "_" + hex.EncodeToString(sum[:4])
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
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

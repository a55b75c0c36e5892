package servername

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxToolName is the longest tool name model APIs accept.
const MaxToolName = 64

// ToolName returns the name to show a model for a tool: prefix and name
// joined with "_" (no prefix for a single server), with every byte
// outside [A-Za-z0-9_-] replaced by "_". A name that had to be changed so,
// or that is longer than 64 bytes, ends with "_" and 8 hex digits of a
// SHA-256 of the full name (cut to fit 64 bytes first): the result is
// stable across runs, and names that sanitise alike (天気 and 予報 are both
// "______") or share their first 55 bytes stay distinct.
func ToolName(prefix, name string) string {
	full := name
	if prefix != "" {
		full = prefix + "_" + name
	}
	b := []byte(full)
	changed := len(b) == 0
	for i, c := range b {
		if !nameByte(c) {
			b[i] = '_'
			changed = true
		}
	}
	if !changed && len(b) <= MaxToolName {
		return string(b)
	}
	sum := sha256.Sum256([]byte(full))
	return string(b[:min(len(b), MaxToolName-9)]) + "_" + hex.EncodeToString(sum[:4])
}

// ValidArgName reports whether name matches ^[A-Za-z0-9_.-]{1,64}$, the
// argument names model APIs take.
func ValidArgName(name string) bool {
	return name != "" && len(name) <= 64 && !strings.ContainsFunc(name, func(r rune) bool {
		return r >= 0x80 || r != '.' && !nameByte(byte(r))
	})
}

// Package term is the terminal side of the mcpadapter CLI: it asks the
// user an MCP elicitation (a form or a URL to visit) with line-based
// prompts, reads the agent REPL's user messages through the same buffered
// reader, and draws progress lines.
//
// Everything is line-based, with no raw mode, so it works the same at a
// terminal, in a pty or tmux, and on a plain pipe. Strings that come from
// a server (messages, titles, URLs) are printed with their control
// characters escaped, so a server cannot move the cursor or recolour the
// terminal.
package term

import (
	"fmt"
	"os"
	"strings"
	"unicode"
)

// IsTerminal reports whether f is a terminal (a character device). It uses
// only f.Stat, so /dev/null, also a character device, counts as one.
func IsTerminal(f *os.File) bool {
	if f == nil {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&os.ModeCharDevice != 0
}

// clean escapes control characters (other than newline and tab) and
// bidirectional overrides in s, a string from a server, before it is
// printed.
func clean(s string) string {
	return escape(s, false)
}

// cleanLine is clean for a string that must stay on one line: newlines and
// tabs are escaped too.
func cleanLine(s string) string {
	return escape(s, true)
}

func escape(s string, oneLine bool) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return mustEscape(r, oneLine) }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !mustEscape(r, oneLine) {
			b.WriteRune(r)
			continue
		}
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

func mustEscape(r rune, oneLine bool) bool {
	if r == '\n' || r == '\t' {
		return oneLine
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

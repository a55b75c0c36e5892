package truncate

import (
	"fmt"
	"unicode/utf8"
)

// MinLimit is the smallest limit a caller should accept: room for the
// note and some text.
const MinLimit = 256

// Note is the note put after a truncated text.
func Note(shown, total int) string {
	return fmt.Sprintf("\n… truncated: %d of %d bytes shown; the full result went to the application, not to you.", shown, total)
}

// Text returns s cut to at most limit bytes with a note saying how much
// was left out, or s itself when it fits or limit is not positive; shown
// is how many bytes of s it keeps. The cut falls on a UTF-8 boundary, and
// the note counts against the limit; a limit too small for the note gives
// as much of s as fits, without one.
func Text(s string, limit int) (out string, shown int, cut bool) {
	if limit <= 0 || len(s) <= limit {
		return s, len(s), false
	}
	// The note's length depends on the number of bytes shown: size it
	// with the largest count it can hold, the total.
	room := limit - len(Note(len(s), len(s)))
	if room < 0 {
		out = UTF8(s, limit)
		return out, len(out), true
	}
	kept := UTF8(s, room)
	return kept + Note(len(kept), len(s)), len(kept), true
}

// UTF8 returns the longest prefix of s of at most n bytes that does not
// end inside a UTF-8 sequence.
func UTF8(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	cut := n
	// Step back over the continuation bytes of a sequence cut short.
	for i := 0; i < utf8.UTFMax && cut > 0; i++ {
		if utf8.RuneStart(s[cut]) {
			break
		}
		cut--
	}
	if !utf8.RuneStart(s[cut]) {
		cut = n // not valid UTF-8 anyway: cut at the byte
	}
	return s[:cut]
}

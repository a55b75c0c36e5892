// Package jsonscan skips over JSON text without decoding it: whitespace,
// strings and whole values. The stdio decoder and the wire layer use it to
// find the members of a message cheaply; it does not validate what it
// skips (json.Valid or a decoder does that where it matters).
package jsonscan

import "bytes"

// Space returns the index of the first byte at or after i in b that is not
// JSON whitespace.
func Space(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// String returns the index after the string that starts at b[i] (a quote),
// or -1 if it does not end.
func String(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		n := 0 // backslashes before the quote
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
}

// Value returns the index after the value that starts at b[i], or -1 if
// it does not end, or nests deeper than maxDepth levels (an object or
// array at b[i] is level 1; zero means no limit).
func Value(b []byte, i, maxDepth int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return String(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = String(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				if depth++; maxDepth > 0 && depth > maxDepth {
					return -1
				}
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	j := i // a number or a literal
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// Members calls fn with each member of the JSON object that starts at
// b[i] (after spaces) and ends b: where its key is, quotes included
// (b[k:kend]), and where its value is (b[v:vend]), while fn returns true.
// It reports false if fn did, or if b from i is not such an object.
func Members(b []byte, i int, fn func(k, kend, v, vend int) bool) bool {
	i = Space(b, i)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = Space(b, i+1)
	if i < len(b) && b[i] == '}' {
		return Space(b, i+1) == len(b)
	}
	for i < len(b) {
		if b[i] != '"' {
			return false
		}
		kend := String(b, i)
		if kend < 0 {
			return false
		}
		k := i
		i = Space(b, kend)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = Space(b, i+1)
		vend := Value(b, i, 0)
		if vend < 0 || !fn(k, kend, i, vend) {
			return false
		}
		i = Space(b, vend)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case '}':
			return Space(b, i+1) == len(b)
		case ',':
			i = Space(b, i+1)
		default:
			return false
		}
	}
	return false
}

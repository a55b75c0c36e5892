package wire

import "bytes"

// The functions here walk the top level of a JSON object without decoding
// it: finding one member of a large message this way allocates nothing
// and costs a fraction of a decode. They do not validate what they skip;
// callers either use text go-sdk has already accepted or validate the
// value they take.

// eachMember calls fn with the name (the text between the quotes) and the
// value of each member of the JSON object b, in order, until fn returns
// false. It reports false when b is not an object it can walk to its end,
// or to where fn stopped, or a member name has escapes (whose value a
// byte comparison would get wrong).
func eachMember(b []byte, fn func(key, value []byte) bool) bool {
	return walkObject(b, nil, fn)
}

// walkObject is eachMember with a look at each name before its value is
// skipped: when before returns false, the walk stops there.
func walkObject(b []byte, before func(key []byte) bool, fn func(key, value []byte) bool) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		end := skipString(b, i)
		if end < 0 {
			return false
		}
		key := b[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		if before != nil && !before(key) {
			return true
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		vend := skipValue(b, i)
		if vend < 0 {
			return false
		}
		if fn != nil && !fn(key, b[i:vend]) {
			return true
		}
		i = skipSpace(b, vend)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return skipSpace(b, i+1) == len(b)
		default:
			return false
		}
	}
}

// Member returns the value of the member named key of the JSON object obj,
// as it is written there. ok is false when the member is absent, appears
// more than once, or obj cannot be walked (see eachMember): in each case a
// decoder's idea of the member could differ from the bytes.
func Member(obj []byte, key string) (value []byte, ok bool) {
	var v [1][]byte
	if !members(obj, []string{key}, v[:]) {
		return nil, false
	}
	return v[0], true
}

// members sets values[i] to the value of the member named keys[i] of the
// JSON object obj, in one pass. It reports false when a member is absent
// or appears more than once, or obj cannot be walked.
func members(obj []byte, keys []string, values [][]byte) bool {
	dup := false
	whole := eachMember(obj, func(k, v []byte) bool {
		for i, key := range keys {
			if string(k) == key {
				dup = dup || values[i] != nil
				values[i] = v
			}
		}
		return !dup
	})
	if !whole || dup {
		return false
	}
	for _, v := range values {
		if v == nil {
			return false
		}
	}
	return true
}

// responseKind reports whether the JSON-RPC message msg, or its start, is
// a response with a result. It stops at the first member name that
// decides (method, result or error), which a JSON-RPC message usually has
// near its start, without looking at the value; decided is false when
// msg ends before one.
func responseKind(msg []byte) (result, decided bool) {
	whole := walkObject(msg, func(k []byte) bool {
		switch string(k) {
		case "method", "error":
			decided = true
		case "result":
			result, decided = true, true
		}
		return !decided
	}, nil)
	return result, decided || whole
}

// callOf returns the method and the id of the JSON-RPC request msg, as
// written; either is nil when absent.
func callOf(msg []byte) (method, id []byte) {
	eachMember(msg, func(k, v []byte) bool {
		switch string(k) {
		case "method":
			method = v
		case "id":
			id = v
		}
		return method == nil || id == nil
	})
	return method, id
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string that starts at b[i], or
// -1 if it does not end.
func skipString(b []byte, i int) int {
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

// skipValue returns the index after the value that starts at b[i], or -1
// if it does not end.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
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

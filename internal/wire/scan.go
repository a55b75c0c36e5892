package wire

import (
	"bytes"

	"github.com/mcpadapter/mcpadapter/internal/jsonscan"
)

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
	i := jsonscan.Space(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = jsonscan.Space(b, i+1)
	if i < len(b) && b[i] == '}' {
		return jsonscan.Space(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		end := jsonscan.String(b, i)
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
		i = jsonscan.Space(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = jsonscan.Space(b, i+1)
		vend := jsonscan.Value(b, i, 0)
		if vend < 0 {
			return false
		}
		if fn != nil && !fn(key, b[i:vend]) {
			return true
		}
		i = jsonscan.Space(b, vend)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = jsonscan.Space(b, i+1)
		case '}':
			return jsonscan.Space(b, i+1) == len(b)
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

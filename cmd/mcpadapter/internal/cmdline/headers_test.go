package cmdline

import (
	"errors"
	"strings"
	"testing"
)

func TestParseHeader(t *testing.T) {
	for _, tc := range []struct {
		in, name, value string
	}{
		// The colon comes first: the = signs are the token's (split at
		// '=', the token would be taken for part of the header's name).
		{"Authorization: Bearer abc==", "Authorization", "Bearer abc=="},
		{"X-Team=cli", "X-Team", "cli"},
		{"X-Url=http://h/p?a=b", "X-Url", "http://h/p?a=b"},
		{"X-Url: http://h/p?a=b", "X-Url", "http://h/p?a=b"},
		{"  X-Empty:  ", "X-Empty", ""},
		{"Cookie: a=b; c=d", "Cookie", "a=b; c=d"},
	} {
		name, value, err := parseHeader(tc.in, 1)
		if err != nil || name != tc.name || value != tc.value {
			t.Errorf("parseHeader(%q) = %q, %q, %v; want %q, %q", tc.in, name, value, err, tc.name, tc.value)
		}
	}
}

// A bad --header is a usage error that names the flag and, when it has
// one, the header's name, and never prints the value.
func TestParseHeaderErrorsHideTheValue(t *testing.T) {
	for _, tc := range []struct {
		in, want, secret string
	}{
		{"Bearer s3cret-token", "--header #2", "s3cret"},
		{"Bearer s3cret: x", "not a header name", "s3cret"},
		{"Bearer abc==", "not a header name", "abc"},
		{": s3cret", "not a header name", "s3cret"},
		{"X-Key: s3cret\r\nInjected: 1", "--header X-Key", "s3cret"},
	} {
		_, _, err := parseHeader(tc.in, 2)
		if err == nil {
			t.Errorf("parseHeader(%q): no error", tc.in)
			continue
		}
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), tc.secret) {
			t.Errorf("parseHeader(%q): %v; want a usage error with %q and without %q", tc.in, err, tc.want, tc.secret)
		}
	}
}

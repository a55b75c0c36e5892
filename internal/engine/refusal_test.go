package engine

import (
	"errors"
	"strings"
	"testing"
)

func TestDescribeChallenge(t *testing.T) {
	long := strings.Repeat("é", 150) // 300 bytes: cut on a rune boundary
	for _, tc := range []struct {
		name   string
		header []string
		want   string
	}{
		{"bearer", []string{`Bearer error="invalid_token", error_description="expired", scope="read", resource_metadata="https://as.example/x"`},
			`error "invalid_token", error_description "expired", scope "read"`},
		{"other scheme first", []string{`Basic realm="x"`, `Bearer error="insufficient_scope"`}, `error "insufficient_scope"`},
		{"no bearer", []string{`Basic realm="x"`}, ""},
		{"unparsable", []string{`Bearer error="unterminated`}, ""},
		{"long", []string{`Bearer error_description="` + long + `"`}, `error_description "` + strings.Repeat("é", 100) + `..."`},
	} {
		if got := describeChallenge(tc.header); got != tc.want {
			t.Errorf("%s: describeChallenge = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestRefusedError(t *testing.T) {
	cause := errors.New("go-sdk's error")
	err := error(&refusedError{status: 403, challenge: `error "insufficient_scope"`, err: cause})
	if got, want := err.Error(), `the server refused authorization: HTTP 403 Forbidden, WWW-Authenticate error "insufficient_scope"`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, cause) {
		t.Error("the refusal does not wrap go-sdk's error")
	}
	if got, want := (&refusedError{status: 401}).Error(), "the server refused authorization: HTTP 401 Unauthorized"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

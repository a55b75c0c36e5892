package wire

import (
	"strings"
	"testing"
)

func TestRedactJSON(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{`{"params":{"arguments":{"token":"s3cret","q":"x"}}}`, `{"params":{"arguments":{"q":"x","token":"[REDACTED]"}}}`},
		{`{"headers":{"Authorization":"Bearer abc.def"}}`, `{"headers":{"Authorization":"[REDACTED]"}}`},
		{`{"password":{"nested":"kept"}}`, `{"password":{"nested":"kept"}}`},
		{`["Bearer abc", {"api_key": 5}]`, `["Bearer [REDACTED]",{"api_key":"[REDACTED]"}]`},
		{`{"text":"use basic dXNlcjpwYXNz now","n":12345678901234567890}`, `{"n":12345678901234567890,"text":"use basic [REDACTED] now"}`},
		{`not json`, `<not JSON>`},
	} {
		if got := RedactJSON([]byte(tc.in)); got != tc.want {
			t.Errorf("RedactJSON(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestRedactURLSecrets(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{`Post "https://h/mcp?api_key=k3y&x=1": dial tcp: refused`, `Post "https://h/mcp?api_key=[REDACTED]&x=1": dial tcp: refused`},
		{`https://h/cb?code=abc&state=s&access_token=t0k`, `https://h/cb?code=[REDACTED]&state=s&access_token=[REDACTED]`},
		{`https://h/mcp?page=2`, `https://h/mcp?page=2`},
		{`no url at all`, `no url at all`},
	} {
		if got := RedactURLSecrets(tc.in); got != tc.want {
			t.Errorf("RedactURLSecrets(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzRedactJSON(f *testing.F) {
	f.Add(`{"params":{"arguments":{"token":"s3cret","q":"x"}}}`)
	f.Add(`{"headers":{"Authorization":"Bearer abc.def"}}`)
	f.Add(`["Bearer abc", {"api_key": 5}]`)
	f.Add(`not json`)
	f.Fuzz(func(t *testing.T, s string) {
		out := RedactJSON([]byte(s))
		if strings.Contains(out, "s3cret") && strings.Contains(s, `"token":"s3cret"`) {
			t.Fatalf("token leaked: %s", out)
		}
	})
}

package httplayer

import (
	"net/url"
	"testing"
)

// FuzzSameOrigin checks SameOrigin, which every HTTP request asks, against
// the origin it stands for: SameOrigin(u, OriginOf(v)) is
// OriginOf(u) == OriginOf(v).
func FuzzSameOrigin(f *testing.F) {
	for _, s := range [][2]string{
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/other"},
		{"HTTP://Example.COM/mcp", "http://example.com:80/"},
		{"https://example.com/mcp", "https://example.com:443"},
		{"https://example.com:8443/mcp", "https://example.com/mcp"},
		{"http://[::1]:9/mcp", "http://[::1]:9/x"},
		{"http://[::1]/mcp", "http://[::1]:80/x"},
		{"http://[fe80::1%25en0]:9/", "http://[FE80::1%25en0]:9/"},
		{"http://example.com/mcp", "https://example.com/mcp"},
		{"http://example.com.evil/mcp", "http://example.com/mcp"},
		{"ftp://example.com/", "ftp://example.com:/"},
		{"/relative", "http://example.com/"},
		{"http://ÉXAMPLE.com/", "http://éxample.com/"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		u, err := url.Parse(a)
		if err != nil {
			return
		}
		v, err := url.Parse(b)
		if err != nil {
			return
		}
		want := OriginOf(u) == OriginOf(v)
		if got := SameOrigin(u, OriginOf(v)); got != want {
			t.Fatalf("SameOrigin(%q, %q) = %v, want %v (OriginOf: %q, %q)", a, OriginOf(v), got, want, OriginOf(u), OriginOf(v))
		}
	})
}

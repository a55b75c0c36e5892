package httplayer

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

type ctxKey struct{}

// echo is a server that answers with the request's X-Tenant and
// Authorization headers.
func echo(t *testing.T) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Header.Get("X-Tenant")+"|"+r.Header.Get("Authorization"))
	}))
	t.Cleanup(s.Close)
	return s
}

func get(t *testing.T, rt http.RoundTripper, ctx context.Context, url string) (string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), nil
}

// TestContextHeadersAndBearer checks that the per-request layers take the
// headers and the token from the request's context, and that a refusal
// sends nothing and returns the caller's error.
func TestContextHeadersAndBearer(t *testing.T) {
	s := echo(t)
	var refused = errors.New("refused")
	rt := ContextHeaders{
		Next: ContextBearer{
			Next: http.DefaultTransport,
			Token: func(ctx context.Context) (string, error) {
				if v, _ := ctx.Value(ctxKey{}).(string); v != "" {
					return "tok-" + v, nil
				}
				return "", nil
			},
			Refused: func(_ context.Context, cause error) error { return errors.Join(refused, cause) },
		},
		Of: func(ctx context.Context) (map[string]string, error) {
			switch v, _ := ctx.Value(ctxKey{}).(string); v {
			case "":
				return nil, nil
			case "bad":
				return nil, errors.New("bad tenant")
			default:
				return map[string]string{"X-Tenant": v}, nil
			}
		},
	}
	got, err := get(t, rt, context.WithValue(context.Background(), ctxKey{}, "acme"), s.URL)
	if err != nil || got != "acme|Bearer tok-acme" {
		t.Fatalf("acme: got %q, %v; want the tenant header and its token", got, err)
	}
	if _, err := get(t, rt, context.Background(), s.URL); !errors.Is(err, refused) || !strings.Contains(err.Error(), "empty token") {
		t.Fatalf("no identity: err = %v, want the Refused error for an empty token", err)
	}
	if _, err := get(t, rt, context.WithValue(context.Background(), ctxKey{}, "bad"), s.URL); err == nil || err.Error() != "bad tenant" {
		t.Fatalf("bad: err = %v, want Of's error as it is", err)
	}
}

// TestOriginGateStrips checks that a request to another origin goes
// through Plain without the stripped headers, and one to the origin
// through Authed.
func TestOriginGateStrips(t *testing.T) {
	s, other := echo(t), echo(t)
	plain := Headers{Next: http.DefaultTransport, Set: map[string]string{"X-Tenant": "plain"}}
	authed := Headers{Next: http.DefaultTransport, Set: map[string]string{"Authorization": "Bearer secret"}}
	req, _ := http.NewRequest(http.MethodGet, s.URL, nil)
	g := OriginGate{Origin: OriginOf(req.URL), Authed: authed, Plain: plain, Strip: []string{"Authorization"}}
	if got, err := get(t, g, context.Background(), s.URL+"/mcp"); err != nil || got != "|Bearer secret" {
		t.Fatalf("same origin: got %q, %v", got, err)
	}
	leak := Headers{Next: g, Set: map[string]string{"Authorization": "Bearer secret"}}
	if got, err := get(t, leak, context.Background(), other.URL); err != nil || got != "plain|" {
		t.Fatalf("other origin: got %q, %v; want Plain's request without Authorization", got, err)
	}
}

func TestValidHeaderName(t *testing.T) {
	for name, want := range map[string]bool{"X-Tenant": true, "": false, "a b": false, "a:b": false, "é": false, "x_y.z~!": true} {
		if got := ValidHeaderName(name); got != want {
			t.Errorf("ValidHeaderName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestPartition checks that a partition depends on the principal and the
// headers (their names in any case), not on the order of the map, and
// that no identity is "".
func TestPartition(t *testing.T) {
	if got := Partition("", nil); got != "" {
		t.Errorf("no identity: %q", got)
	}
	a := Partition("ann", map[string]string{"x-tenant": "1", "X-Region": "eu"})
	if b := Partition("ann", map[string]string{"X-Region": "eu", "X-Tenant": "1"}); a != b {
		t.Errorf("same identity, two partitions: %q, %q", a, b)
	}
	for _, other := range []string{Partition("bob", map[string]string{"x-tenant": "1", "X-Region": "eu"}), Partition("ann", map[string]string{"x-tenant": "2", "X-Region": "eu"}), Partition("ann", nil), Partition("", map[string]string{"X-Tenant": "1"})} {
		if other == a || other == "" {
			t.Errorf("partition %q for another identity than %q", other, a)
		}
	}
}

// TestCheckIdentityHeaders: an identity may set its own headers, and none
// of the credentials' or the transport's, no invalid name and no value
// that would split the request; a header named twice in different cases
// is refused by its canonical name.
func TestCheckIdentityHeaders(t *testing.T) {
	for _, c := range []struct {
		headers     map[string]string
		header, why string
	}{
		{map[string]string{"X-Tenant": "t1", "X-User": "u"}, "", ""},
		{nil, "", ""},
		{map[string]string{"authorization": "Bearer x"}, "authorization", "the adapter owns this header"},
		{map[string]string{"Mcp-Session-Id": "s"}, "Mcp-Session-Id", "the transport sets it"},
		{map[string]string{"x-a": "1", "X-A": "2"}, "X-A", "named twice"},
		{map[string]string{"a b": "1"}, "a b", "not a valid header name"},
		{map[string]string{"": "1"}, "", "not a valid header name"},
		{map[string]string{"X-A": "1\r\nHost: evil"}, "X-A", "line break"},
	} {
		h, why := CheckIdentityHeaders(c.headers)
		if h != c.header || !strings.Contains(why, c.why) || (why == "") != (c.why == "") {
			t.Errorf("CheckIdentityHeaders(%q) = %q, %q; want %q, %q", c.headers, h, why, c.header, c.why)
		}
	}
}

func TestHasAuthorization(t *testing.T) {
	for _, c := range []struct {
		headers map[string]string
		want    bool
	}{
		{nil, false},
		{map[string]string{"X-Tenant": "a"}, false},
		{map[string]string{"Authorization": "Bearer x"}, true},
		{map[string]string{"authorization": "Bearer x"}, true},
		{map[string]string{"Proxy-Authorization": "x"}, false},
	} {
		if got := HasAuthorization(c.headers); got != c.want {
			t.Errorf("HasAuthorization(%q) = %v, want %v", c.headers, got, c.want)
		}
	}
}

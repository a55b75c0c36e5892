package oauthflow

import (
	"context"
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
	"time"
)

func testWeb(t testing.TB, key string) *Web {
	w, err := NewWeb(WebConfig{ClientID: "c", Issuer: "https://as.example", RedirectURL: "https://app.example/cb", StateKey: []byte(key)})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// FuzzOpenState: a state opens only as it was sealed: any other text,
// a changed byte of a sealed state, or a state of another key is refused
// without a panic.
func FuzzOpenState(f *testing.F) {
	w := testWeb(f, "0123456789abcdef0123456789abcdef")
	other := testWeb(f, "fedcba9876543210fedcba9876543210")
	sealedOnly := webState{Principal: "alice", Resource: "https://mcp.example/mcp", Audience: "https://mcp.example/mcp",
		Verifier: "v", Nonce: "n", Expires: 1 << 50, Scopes: []string{"a"}}
	good := w.sealState(&sealedOnly)
	f.Add(good, 0, byte(1))
	f.Add("", 3, byte(0))
	f.Add(strings.Repeat("A", 100), 7, byte(0x80))
	f.Add(other.sealState(&webState{Principal: "alice", Resource: "r", Verifier: "v", Nonce: "n", Expires: 1}), 0, byte(0))
	f.Fuzz(func(t *testing.T, raw string, at int, flip byte) {
		if st, err := w.openState(raw); err == nil && (st.Principal != sealedOnly.Principal || st.Nonce != sealedOnly.Nonce || st.Expires != sealedOnly.Expires) {
			// Only a state this key sealed opens (the seed corpus has
			// one, sealed again in each fuzzing process); the fuzzer
			// cannot make another.
			t.Fatalf("a state nobody sealed opened: %q -> %+v", raw, st)
		}
		if flip == 0 {
			return
		}
		b, _ := base64.RawURLEncoding.DecodeString(good)
		if at < 0 {
			at = -at
		}
		b[at%len(b)] ^= flip
		if st, err := w.openState(base64.RawURLEncoding.EncodeToString(b)); err == nil {
			t.Fatalf("a changed state opened: %+v", st)
		}
	})
}

// TestOpenState: a sealed state opens as it was; another key's, an
// incomplete one and a changed one do not.
func TestOpenState(t *testing.T) {
	w := testWeb(t, "0123456789abcdef0123456789abcdef")
	want := webState{Principal: "al\nice", Resource: "https://mcp.example/mcp", Audience: "https://mcp.example/", Verifier: "v", Nonce: "n", Expires: 42, Scopes: []string{"s"}}
	st, err := w.openState(w.sealState(&want))
	if err != nil || st.Principal != want.Principal || st.Resource != want.Resource || st.Audience != want.Audience ||
		st.Verifier != want.Verifier || st.Nonce != want.Nonce || st.Expires != 42 || len(st.Scopes) != 1 {
		t.Fatalf("opened %+v, %v", st, err)
	}
	if _, err := testWeb(t, "fedcba9876543210fedcba9876543210").openState(w.sealState(&want)); err == nil {
		t.Error("another key's state opened")
	}
	if _, err := w.openState(w.sealState(&webState{Principal: "alice", Resource: "r"})); err == nil {
		t.Error("a state without a verifier, nonce or expiry opened")
	}
	if _, err := w.openState("not base64!"); err == nil {
		t.Error("a state that is not base64url opened")
	}
}

// TestStateBoundToClient: a state opens only in a Web of the same issuer,
// client and redirect URL, whatever key they share (a trailing slash of
// the issuer aside).
func TestStateBoundToClient(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	base := WebConfig{ClientID: "c", Issuer: "https://as.example", RedirectURL: "https://app.example/cb", StateKey: key}
	w, err := NewWeb(base)
	if err != nil {
		t.Fatal(err)
	}
	raw := w.sealState(&webState{Principal: "alice", Resource: "https://mcp.example/mcp", Verifier: "v", Nonce: "n", Expires: 42})
	for _, tc := range []struct {
		change func(*WebConfig)
		opens  bool
	}{
		{func(c *WebConfig) {}, true},
		{func(c *WebConfig) { c.Issuer += "/" }, true},
		{func(c *WebConfig) { c.Issuer = "https://other-as.example" }, false},
		{func(c *WebConfig) { c.ClientID = "d" }, false},
		{func(c *WebConfig) { c.RedirectURL = "https://app.example/other" }, false},
	} {
		cfg := base
		tc.change(&cfg)
		other, err := NewWeb(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.openState(raw); (err == nil) != tc.opens {
			t.Errorf("%s %s %s: opened %v; want %v", cfg.Issuer, cfg.ClientID, cfg.RedirectURL, err == nil, tc.opens)
		}
	}
}

// TestStatePrincipalExact: the state carries its principal byte for byte:
// a principal that is not valid UTF-8 completes its own sign-in, and the
// principal JSON would turn it into (its bytes replaced by U+FFFD) does not.
func TestStatePrincipalExact(t *testing.T) {
	w := testWeb(t, "0123456789abcdef0123456789abcdef")
	raw := w.sealState(&webState{Principal: "al\xffice", Resource: "https://mcp.example/mcp", Verifier: "v", Nonce: "n",
		Expires: time.Now().Add(time.Hour).UnixMilli()})
	st, err := w.openState(raw)
	if err != nil || st.Principal != "al\xffice" {
		t.Fatalf("opened %q, %v; want the principal al\\xffice", st.Principal, err)
	}
	// No code: Complete stops after the principal's check, before any
	// request.
	q := url.Values{"state": {raw}}
	if _, err := w.Complete(context.Background(), "al\uFFFDice", q); err == nil || !strings.Contains(err.Error(), "another user") {
		t.Errorf("another principal completing al\\xffice's sign-in: %v; want it refused as another user's", err)
	}
	if _, err := w.Complete(context.Background(), "al\xffice", q); err == nil || !strings.Contains(err.Error(), "without a code") {
		t.Errorf("al\\xffice completing its own sign-in (without a code): %v; want past the principal's check", err)
	}
}

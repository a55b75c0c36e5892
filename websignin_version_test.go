package mcpadapter_test

import (
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestWebSignInTokenVersion: a principal's token version is "" before
// any sign-in, then a hash that does not show the token, the same for a
// WebSignIn of another replica sharing the store, another principal's
// still ""; a new token stored for the principal changes it.
func TestWebSignInTokenVersion(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "webapp", ClientSecret: webSecret, NoRegistration: true})
	app := startWebApp(t)
	store := mcpadapter.NewMemoryTokenStore()
	s := newWebSignIn(t, as, app, mcpadapter.WebSignInOptions{Store: store})
	other := newWebSignIn(t, as, app, mcpadapter.WebSignInOptions{Store: store})
	c := webClient(t, as.MCPURL, s)
	version := func(w *mcpadapter.WebSignIn, p string) string {
		t.Helper()
		v, err := w.TokenVersion(ctx, as.MCPURL, p)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := version(s, "alice"); v != "" {
		t.Fatalf("alice's version before signing in: %q", v)
	}
	signInAt(t, app, needSignIn(t, ctx, c, "alice"), "alice")
	first := version(s, "alice")
	st, err := store.Load(ctx, mcpadapter.TokenKey(as.MCPURL, "alice"))
	if err != nil || st == nil {
		t.Fatal(st, err)
	}
	if first == "" || strings.Contains(st.Token.AccessToken, first) || strings.Contains(first, st.Token.AccessToken) {
		t.Fatalf("alice's version %q (token %d bytes)", first, len(st.Token.AccessToken))
	}
	if v := version(other, "alice"); v != first {
		t.Fatalf("another replica sees alice's version %q, want %q", v, first)
	}
	if v := version(s, "bob"); v != "" {
		t.Fatalf("bob's version, never signed in: %q", v)
	}
	st.Token.AccessToken += "-new"
	if err := store.Save(ctx, mcpadapter.TokenKey(as.MCPURL, "alice"), st); err != nil {
		t.Fatal(err)
	}
	if v := version(s, "alice"); v == first || v == "" {
		t.Fatalf("alice's version after a new token: %q", v)
	}
}

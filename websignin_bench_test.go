package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// BenchmarkWebSignIn measures a signed-in user's tool call through
// WebSignIn against the same call with the same token given by
// PrincipalToken (the cost of finding the principal's token), and a
// signed-out user's call to its *SignInRequiredError (the 401, the
// protected resource metadata, the state sealed; the issuer's metadata is
// cached).
func BenchmarkWebSignIn(b *testing.B) {
	ctx := context.Background()
	as := testauth.Start(b, testauth.Options{MCP: testserver.New(testserver.Options{}), ClientID: "webapp", ClientSecret: webSecret, NoRegistration: true})
	app := startWebApp(b)
	store := mcpadapter.NewMemoryTokenStore()
	c := webClient(b, as.MCPURL, newWebSignIn(b, as, app, mcpadapter.WebSignInOptions{Store: store}))
	signInAt(b, app, needSignIn(b, ctx, c, "alice"), "alice")
	st, err := store.Load(ctx, mcpadapter.TokenKey(as.MCPURL, "alice"))
	if err != nil || st == nil {
		b.Fatal(st, err)
	}
	token := st.Token.AccessToken
	plain, err := mcpadapter.NewClient(as.MCPURL, &mcpadapter.ClientOptions{Auth: mcpadapter.PrincipalToken(func(context.Context, string) (string, error) { return token, nil })})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = plain.Close() })
	alice := asUser(ctx, "alice")
	args := json.RawMessage(`{"text":"hi"}`)
	for _, bc := range []struct {
		name string
		c    *mcpadapter.Client
	}{{"signed-in/WebSignIn", c}, {"signed-in/PrincipalToken", plain}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.c.CallTool(alice, "echo", args, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("signed-out", func(b *testing.B) {
		carol := asUser(ctx, "carol")
		b.ReportAllocs()
		before := as.Counts().Unauthorized
		n := 0
		for b.Loop() {
			n++
			if _, err := c.CallTool(carol, "echo", args, nil); !errors.As(err, new(*mcpadapter.SignInRequiredError)) {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(as.Counts().Unauthorized-before)/float64(n), "401s/op")
	})
}

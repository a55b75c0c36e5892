package replicatest

import (
	"context"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testdb"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestIdleReplicaSavesKeptToken: a replica refreshes an expired token at
// an authorization server that rotates refresh tokens and revokes a
// family when one is used twice, and the database stops answering before
// the new token is saved. The database comes back; the replica gets no
// more requests (the user's next ones go to another replica). The token
// it keeps must reach the database without a request of its own: the
// other replica then uses it, with no second refresh of the rotated
// token (which would revoke every token of the sign-in) and no sign-in.
func TestIdleReplicaSavesKeptToken(t *testing.T) {
	for _, kind := range []string{"redis", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			db := startDB(t, kind)
			direct := mustOpen(t, kind, db.URL)
			as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), ReuseDetection: true})
			signIn := &authClient{url: as.MCPURL, store: direct.tokens, user: &browser{}}
			if err := signIn.echo(ctx); err != nil {
				t.Fatal(err)
			}
			signIn.close()
			st, err := direct.tokens.Load(ctx, as.MCPURL)
			if err != nil || st == nil {
				t.Fatalf("stored token: %v %v", st, err)
			}
			st.Token.Expiry = time.Now().Add(-time.Minute)
			if err := direct.tokens.Save(ctx, as.MCPURL, st); err != nil {
				t.Fatal(err)
			}

			tokens, p := proxiedTokens(t, kind, db)
			a := &authClient{url: as.MCPURL, store: &stallOnSave{TokenUpdater: tokens, p: p}, user: &browser{refuse: true}}
			defer a.close()
			if err := a.echo(ctx); err != nil {
				t.Fatalf("the replica whose save failed: %v", err)
			}
			if now, _ := direct.tokens.Load(ctx, as.MCPURL); now.Token.RefreshToken != st.Token.RefreshToken {
				t.Fatal("the token was saved although the database did not answer: the test proves nothing")
			}
			p.Set(testdb.Forward)
			// Replica a gets no more requests.
			deadline := time.Now().Add(30 * time.Second)
			for {
				if now, _ := direct.tokens.Load(ctx, as.MCPURL); now != nil && now.Token.RefreshToken != st.Token.RefreshToken {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the token an idle replica keeps in memory never reached the database (30 s after it answered again)")
				}
				time.Sleep(100 * time.Millisecond)
			}
			b := &authClient{url: as.MCPURL, store: direct.tokens, user: &browser{refuse: true}}
			defer b.close()
			if err := b.echo(ctx); err != nil {
				t.Errorf("another replica: %v", err)
			}
			if c := as.Counts(); c.Refreshes != 1 || c.RefreshReuses != 0 || c.Authorizations != 1 || a.user.opened+b.user.opened != 0 {
				t.Errorf("counts %+v, users sent %d, %d times; want 1 sign-in, 1 refresh, no reuse", c, a.user.opened, b.user.opened)
			}
		})
	}
}

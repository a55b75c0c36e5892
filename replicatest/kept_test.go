package replicatest

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testdb"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/mcpadapter/mcpadapter/pgstore"
	"github.com/mcpadapter/mcpadapter/redisstore"
	"github.com/redis/go-redis/v9"
)

// stallOnSave is a shared token store whose link to the database stops
// forwarding once, as soon as a refresh has got its new token: the save
// that follows cannot reach the database.
type stallOnSave struct {
	mcpadapter.TokenUpdater
	p    *testdb.Proxy
	once sync.Once
}

func (s *stallOnSave) Update(ctx context.Context, key string, fn func(context.Context, *mcpadapter.StoredToken) (*mcpadapter.StoredToken, error)) error {
	return s.TokenUpdater.Update(ctx, key, func(ctx context.Context, cur *mcpadapter.StoredToken) (*mcpadapter.StoredToken, error) {
		next, err := fn(ctx, cur)
		if next != nil {
			s.once.Do(func() { s.p.Set(testdb.Stall) })
		}
		return next, err
	})
}

// proxiedTokens opens a token store of kind on db through a new proxy,
// with short timeouts.
func proxiedTokens(t *testing.T, kind string, db *testdb.Server) (mcpadapter.TokenUpdater, *testdb.Proxy) {
	p := testdb.NewProxy(t, db.Addr)
	ctx := context.Background()
	if kind == "redis" {
		rdb := redis.NewClient(&redis.Options{Addr: p.Addr, ReadTimeout: time.Minute, MaxRetries: -1})
		t.Cleanup(func() { rdb.Close() })
		s, err := redisstore.NewTokenStore(rdb, &redisstore.TokenOptions{Key: tokenKey, LockTTL: 2 * time.Second, Options: redisstore.Options{Timeout: 300 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		return s, p
	}
	pool, err := pgxpool.New(ctx, "postgres://postgres@"+p.Addr+"/postgres?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s, err := pgstore.NewTokenStore(ctx, pool, &pgstore.TokenOptions{Key: tokenKey, LockTTL: 2 * time.Second, Options: pgstore.Options{Timeout: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	return s, p
}

// TestRefreshKeptWhenSaveFails: a replica refreshes an expired
// DPoP-bound token at an authorization server that rotates refresh
// tokens, and the database stops answering before the new token is
// saved. The replica keeps the token, uses it (no sign-in), and saves it
// once the database answers again; another replica then uses that token
// (as DPoP) without a refresh or a sign-in. One refresh in all.
func TestRefreshKeptWhenSaveFails(t *testing.T) {
	for _, kind := range []string{"redis", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			db := startDB(t, kind)
			direct := mustOpen(t, kind, db.URL)
			as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{}), DPoP: true})
			key, err := mcpadapter.NewDPoPKey()
			if err != nil {
				t.Fatal(err)
			}
			signIn := &authClient{url: as.MCPURL, store: direct.tokens, key: key, user: &browser{}}
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
			a := &authClient{url: as.MCPURL, store: &stallOnSave{TokenUpdater: tokens, p: p}, key: key, user: &browser{refuse: true}}
			defer a.close()
			if err := a.echo(ctx); err != nil {
				t.Fatalf("the replica whose save failed: %v", err)
			}
			if now, _ := direct.tokens.Load(ctx, as.MCPURL); now.Token.RefreshToken != st.Token.RefreshToken {
				t.Fatal("the token was saved although the database did not answer: the test proves nothing")
			}
			p.Set(testdb.Forward)
			// The next use after the back-off (a second) saves it.
			deadline := time.Now().Add(30 * time.Second)
			for {
				time.Sleep(300 * time.Millisecond)
				if err := a.echo(ctx); err != nil {
					t.Fatal(err)
				}
				if now, _ := direct.tokens.Load(ctx, as.MCPURL); now != nil && now.Token.RefreshToken != st.Token.RefreshToken {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the token kept in memory was never saved")
				}
			}
			from := len(as.AuthorizationHeaders())
			b := &authClient{url: as.MCPURL, store: direct.tokens, key: key, user: &browser{refuse: true}}
			defer b.close()
			if err := b.echo(ctx); err != nil {
				t.Fatalf("another replica: %v", err)
			}
			for i, h := range as.AuthorizationHeaders()[from:] {
				if !strings.HasPrefix(h, "DPoP ") {
					t.Errorf("the other replica's request %d sent %q, want DPoP", i, strings.SplitN(h, " ", 2)[0])
				}
			}
			if c := as.Counts(); c.Refreshes != 1 || c.Authorizations != 1 || a.user.opened+b.user.opened != 0 {
				t.Errorf("counts %+v, users sent %d, %d times; want 1 sign-in, 1 refresh", c, a.user.opened, b.user.opened)
			}
		})
	}
}

// authClient is one client of an OAuth-protected server, kept between
// calls.
type authClient struct {
	url   string
	store mcpadapter.TokenStore
	key   crypto.Signer
	user  *browser
	a     *mcpadapter.Adapter
	tool  *mcpadapter.Tool
}

// echo calls the server's echo tool, connecting first if needed.
func (c *authClient) echo(ctx context.Context) error {
	if c.a == nil {
		o := &mcpadapter.OAuth{OpenURL: c.user.open, Store: c.store, DPoPKey: c.key}
		cl, err := mcpadapter.NewClient(c.url, &mcpadapter.ClientOptions{Auth: o, ConnectTimeout: 10 * time.Second})
		if err != nil {
			return err
		}
		if c.a, err = mcpadapter.New(cl, nil); err != nil {
			return err
		}
		tools, err := c.a.Tools(ctx)
		if err != nil {
			return err
		}
		for _, t := range tools {
			if t.Name == "echo" {
				c.tool = t
			}
		}
	}
	if c.tool == nil {
		return errors.New("no echo tool")
	}
	res, err := c.tool.Call(ctx, []byte(`{"text":"hi"}`))
	if err != nil {
		return err
	}
	if res.Text() != "hi" {
		return fmt.Errorf("echo said %q", res.Text())
	}
	return nil
}

func (c *authClient) close() {
	if c.a != nil {
		c.a.Close()
	}
}

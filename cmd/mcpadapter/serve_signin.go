package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/cmdline"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/pgstore"
	"github.com/mcpadapter/mcpadapter/redisstore"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"
)

// serveSignInFlags set up the sign-in pages (gateway.SignInOptions) that
// servers whose "auth" is {"type": "signin"} need.
type serveSignInFlags struct {
	url         string
	keyEnv      string
	loginID     string
	loginSecret string
}

func (f *serveSignInFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.url, "signin-url", "", "the gateway's public base `URL` of its sign-in pages (URL/oauth/start, /oauth/login, /oauth/callback) for servers whose auth is \"signin\" (default: --resource without its last path element)")
	fl.StringVar(&f.keyEnv, "signin-key-env", "", "the environment `variable` holding the sign-in key (at least 32 random bytes, the same on every replica): it seals the sign-ins' states, links, cookies and the stored tokens")
	fl.StringVar(&f.loginID, "signin-login-client-id", "", "the gateway's client `ID` at its first --issuer, with SIGNIN-URL/oauth/login among its redirect URIs: the sign-in pages sign the browser's user in there")
	fl.StringVar(&f.loginSecret, "signin-login-secret-env", "", "the environment `variable` holding that client's secret")
}

// needed reports whether a server of cfg signs its users in.
func signInNeeded(cfg *mcpadapter.Config) bool {
	for _, s := range cfg.Servers {
		if a := s.Auth; a != nil && a.Grant != nil && a.Grant.Type == "signin" {
			return true
		}
	}
	return false
}

// options returns the sign-in pages' options, or nil when no server of
// cfg needs them and no flag is given; storeURL is --store-env's value
// ("" for none): the tokens are kept there.
// guard is the Guard, made later (its Principal checks the logins).
func (f *serveSignInFlags) options(ctx context.Context, cfg *mcpadapter.Config, auth *serveAuthFlags, guard **resourceserver.Guard, storeURL string) (*gateway.SignInOptions, func(), error) {
	set := f.url != "" || f.keyEnv != "" || f.loginID != "" || f.loginSecret != ""
	if !set && !signInNeeded(cfg) {
		return nil, func() {}, nil
	}
	if f.keyEnv == "" {
		return nil, nil, cmdline.Usagef(`a server's auth is "signin": give the sign-in key with --signin-key-env`)
	}
	raw, ok := os.LookupEnv(f.keyEnv)
	if !ok || len(raw) < 32 {
		return nil, nil, cmdline.Usagef("--signin-key-env %s: the variable must hold at least 32 random bytes", f.keyEnv)
	}
	key := sha256.Sum256([]byte("mcpadapter serve sign-in key\x00" + raw))
	if len(auth.issuers) == 0 || f.loginID == "" || auth.resource == "" {
		return nil, nil, cmdline.Usagef("the sign-in pages know a browser's user by a sign-in at the gateway's --issuer: give --issuer, --resource and --signin-login-client-id")
	}
	secret := ""
	if f.loginSecret != "" {
		if secret, ok = os.LookupEnv(f.loginSecret); !ok {
			return nil, nil, cmdline.Usagef("--signin-login-secret-env %s: the variable is not set", f.loginSecret)
		}
	}
	base := f.url
	if base == "" {
		u, err := url.Parse(auth.resource)
		if err != nil {
			return nil, nil, cmdline.Usagef("--signin-url: say the gateway's public base URL")
		}
		u.Path = u.Path[:strings.LastIndex(u.Path, "/")+1]
		base = strings.TrimSuffix(u.String(), "/")
	}
	o := &gateway.SignInOptions{URL: base, Key: key[:], Login: &gateway.SignInLogin{Issuer: auth.issuers[0], ClientID: f.loginID,
		ClientSecret: secret, Resource: auth.resource, Scopes: auth.scopes,
		Verify: func(ctx context.Context, tok string) (string, error) { return (*guard).Principal(ctx, tok) }}}
	closeFn := func() {}
	if storeURL != "" {
		tokKey := sha256.Sum256(append([]byte("mcpadapter serve token store\x00"), key[:]...))
		store, c, err := openTokenStore(ctx, storeURL, tokKey[:])
		if err != nil {
			return nil, nil, fmt.Errorf("--store-env: the token store: %w", err)
		}
		o.Store, closeFn = store, c
	}
	return o, closeFn, nil
}

// openTokenStore opens the token store of the Redis or PostgreSQL server
// of raw (openStore has checked it).
func openTokenStore(ctx context.Context, raw string, key []byte) (mcpadapter.TokenStore, func(), error) {
	if strings.HasPrefix(raw, "redis") {
		o, err := redis.ParseURL(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("not a Redis URL (%v)", redactErr(err, raw))
		}
		rdb := redis.NewClient(o)
		s, err := redisstore.NewTokenStore(rdb, &redisstore.TokenOptions{Key: key})
		if err != nil {
			_ = rdb.Close()
			return nil, nil, err
		}
		return s, func() { _ = rdb.Close() }, nil
	}
	pool, err := pgxpool.New(ctx, raw)
	if err != nil {
		return nil, nil, fmt.Errorf("not a PostgreSQL URL (%v)", redactErr(err, raw))
	}
	s, err := pgstore.NewTokenStore(ctx, pool, &pgstore.TokenOptions{Key: key})
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return s, pool.Close, nil
}

// mount adds the sign-in pages of gw at o's path to mux.
func mountSignIn(mux *http.ServeMux, gw *gateway.Gateway, o *gateway.SignInOptions, out io.Writer) {
	u, _ := url.Parse(o.URL)
	mux.Handle(strings.TrimSuffix(u.Path, "/")+"/oauth/", gw.SignInHandler())
	fmt.Fprintf(out, "mcpadapter serve: sign-in pages at %s/oauth/ (callback %s/oauth/callback)\n", o.URL, o.URL)
}

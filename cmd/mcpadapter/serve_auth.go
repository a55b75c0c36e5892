package main

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/cmdline"
	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/spf13/pflag"
)

// serveAuthFlags make the gateway an OAuth resource server
// (gateway/resourceserver).
type serveAuthFlags struct {
	resource      string
	issuers       []string
	jwksURL       string
	scopes        []string
	algs          []string
	introspectURL string
	introspectID  string
	introspectEnv string
	apiKeys       []string
	dpopNonce     bool
	dpopNonceEnv  string
	// replay is the store replicas share DPoP proofs in (--store-env);
	// nil: the Guard's own.
	replay resourceserver.ReplayStore
}

func (f *serveAuthFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.resource, "resource", "", "the gateway's public `URL`, the audience of its tokens (default: http://LISTEN/mcp on loopback)")
	fl.StringArrayVar(&f.issuers, "issuer", nil, "accept JWT access tokens of this authorization server `URL` (repeatable)")
	fl.StringVar(&f.jwksURL, "jwks-url", "", "the `URL` of the only --issuer's keys (default: its metadata's jwks_uri)")
	fl.StringArrayVar(&f.scopes, "scope", nil, "a `scope` every token needs (repeatable)")
	fl.StringArrayVar(&f.algs, "token-alg", nil, "a JWS `algorithm` accepted for tokens and DPoP proofs (repeatable; default RS256 PS256 ES256 ES384 EdDSA)")
	fl.StringVar(&f.introspectURL, "introspection-url", "", "check other tokens at this token introspection `URL` (RFC 7662)")
	fl.StringVar(&f.introspectID, "introspection-client-id", "", "the gateway's client `ID` at the introspection endpoint")
	fl.StringVar(&f.introspectEnv, "introspection-secret-env", "", "the environment `variable` holding the gateway's client secret")
	fl.StringArrayVar(&f.apiKeys, "api-key", nil, "`PRINCIPAL=VAR`: accept the API key in the environment variable VAR as PRINCIPAL's (repeatable)")
	fl.BoolVar(&f.dpopNonce, "dpop-nonce", false, "make DPoP proofs carry a nonce the gateway issued")
	fl.StringVar(&f.dpopNonceEnv, "dpop-nonce-key-env", "", "with --dpop-nonce, the environment `variable` holding the nonce key (32 bytes or more) that replicas share (default: a random key per process)")
}

// on reports whether any credential is configured.
func (f *serveAuthFlags) on() bool {
	return len(f.issuers) > 0 || f.introspectURL != "" || len(f.apiKeys) > 0
}

// guard returns the resource server for a gateway listening on addr, or
// nil when no credential is configured.
func (f *serveAuthFlags) guard(addr net.Addr, logger *slog.Logger) (*resourceserver.Guard, error) {
	if !f.on() {
		if f.resource != "" || f.jwksURL != "" || len(f.scopes) > 0 || f.introspectID != "" || f.dpopNonce || f.dpopNonceEnv != "" {
			return nil, cmdline.Usagef("--resource, --jwks-url, --scope, --introspection-client-id and --dpop-nonce need --issuer, --introspection-url or --api-key")
		}
		return nil, nil
	}
	o := &resourceserver.Options{
		Resource: f.resource, Issuers: f.issuers, JWKSURL: f.jwksURL, Scopes: f.scopes,
		Algorithms: f.algs, DPoPNonce: f.dpopNonce, Logger: logger, ReplayStore: f.replay,
	}
	if f.dpopNonceEnv != "" {
		key, ok := os.LookupEnv(f.dpopNonceEnv)
		if !f.dpopNonce || !ok {
			return nil, cmdline.Usagef("--dpop-nonce-key-env %s: needs --dpop-nonce and the variable set", f.dpopNonceEnv)
		}
		o.DPoPNonceKey = []byte(key)
	}
	if o.Resource == "" {
		if addr == nil || !isLoopback(addr) {
			return nil, cmdline.Usagef("--resource: say the gateway's public URL (its tokens' audience)")
		}
		o.Resource = "http://" + addr.String() + "/mcp"
	}
	if f.introspectURL != "" {
		secret := ""
		if f.introspectEnv != "" {
			var ok bool
			if secret, ok = os.LookupEnv(f.introspectEnv); !ok {
				return nil, cmdline.Usagef("--introspection-secret-env %s: the variable is not set", f.introspectEnv)
			}
		}
		o.Introspection = &resourceserver.Introspection{URL: f.introspectURL, ClientID: f.introspectID, ClientSecret: secret}
	}
	for _, kv := range f.apiKeys {
		p, env, ok := strings.Cut(kv, "=")
		if !ok || p == "" || env == "" {
			return nil, cmdline.Usagef("--api-key %q: want PRINCIPAL=VAR, the key in the environment variable VAR", kv)
		}
		key, set := os.LookupEnv(env)
		if !set || key == "" {
			return nil, cmdline.Usagef("--api-key %s: the variable %s is not set", p, env)
		}
		o.APIKeys = append(o.APIKeys, resourceserver.APIKey{Principal: p, Key: key})
	}
	g, err := resourceserver.New(o)
	if err != nil {
		return nil, cmdline.Usagef("%v", err)
	}
	return g, nil
}

// describe prints what the gateway accepts, naming no secret.
func (f *serveAuthFlags) describe(w io.Writer, g *resourceserver.Guard) {
	var what []string
	if len(f.issuers) > 0 {
		what = append(what, "JWTs of "+strings.Join(f.issuers, ", "))
	}
	if f.introspectURL != "" {
		what = append(what, "tokens introspected at "+f.introspectURL)
	}
	if len(f.apiKeys) > 0 {
		var ps []string
		for _, kv := range f.apiKeys {
			p, _, _ := strings.Cut(kv, "=")
			ps = append(ps, p)
		}
		what = append(what, fmt.Sprintf("API keys of %s", strings.Join(ps, ", ")))
	}
	fmt.Fprintf(w, "mcpadapter serve: OAuth resource server: accepts %s; metadata at %s\n", strings.Join(what, "; "), g.MetadataURL())
}

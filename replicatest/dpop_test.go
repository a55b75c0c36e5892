package replicatest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
	"github.com/mcpadapter/mcpadapter/internal/testdb"
	"github.com/mcpadapter/mcpadapter/pgstore"
	"github.com/mcpadapter/mcpadapter/redisstore"
	"github.com/redis/go-redis/v9"
)

// dpopIssuer is an authorization server's signing key, its JWKS served on
// loopback, and the resource its tokens are for.
type dpopIssuer struct {
	t        testing.TB
	iss      string
	resource string
	key      *rsa.PrivateKey
}

func newDPoPIssuer(t testing.TB) *dpopIssuer {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "r", Algorithm: "RS256", Use: "sig"}}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(jwks)
	}))
	t.Cleanup(srv.Close)
	return &dpopIssuer{t: t, iss: srv.URL, resource: "https://gw.example.com/mcp", key: key}
}

// guard is a resource server of the issuer's tokens with the replay store.
func (i *dpopIssuer) guard(store resourceserver.ReplayStore, perPrincipal int) *resourceserver.Guard {
	g, err := resourceserver.New(&resourceserver.Options{Resource: i.resource, Issuers: []string{i.iss}, JWKSURL: i.iss + "/jwks",
		Logger: quietLimitLogger(), ReplayStore: store, MaxReplayPerPrincipal: perPrincipal})
	if err != nil {
		i.t.Fatal(err)
	}
	return g
}

// dpopClient is a client of sub with its DPoP key and a token bound to it.
type dpopClient struct {
	i    *dpopIssuer
	dpop *oauthflow.DPoP
	tok  string
}

func (i *dpopIssuer) client(sub string) *dpopClient {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		i.t.Fatal(err)
	}
	d, err := oauthflow.NewDPoP(key)
	if err != nil {
		i.t.Fatal(err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: i.key}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", "r"))
	if err != nil {
		i.t.Fatal(err)
	}
	claims, _ := json.Marshal(map[string]any{"iss": i.iss, "sub": sub, "aud": i.resource, "exp": time.Now().Unix() + 600, "cnf": map[string]any{"jkt": d.Thumbprint()}})
	jws, err := signer.Sign(claims)
	if err != nil {
		i.t.Fatal(err)
	}
	tok, err := jws.CompactSerialize()
	if err != nil {
		i.t.Fatal(err)
	}
	return &dpopClient{i: i, dpop: d, tok: tok}
}

// proof is a fresh proof of a POST to the resource with the client's token.
func (c *dpopClient) proof() string {
	u, _ := url.Parse(c.i.resource)
	p, err := c.dpop.Proof(http.MethodPost, u, c.tok, "")
	if err != nil {
		c.i.t.Fatal(err)
	}
	return p
}

// check runs g.Check on a POST to the resource with the token and proof.
func (c *dpopClient) check(g *resourceserver.Guard, proof string) error {
	r := httptest.NewRequest(http.MethodPost, c.i.resource, nil)
	r.Header.Set("Authorization", "DPoP "+c.tok)
	r.Header.Set("DPoP", proof)
	_, err := g.Check(r)
	return err
}

func refusalStatus(err error) int {
	var e *resourceserver.Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// hammer sends n fresh proofs of c to g and returns how many were
// accepted and how many refused with 429.
func (c *dpopClient) hammer(g *resourceserver.Guard, n int) (ok, limited int) {
	for range n {
		switch err := c.check(g, c.proof()); refusalStatus(err) {
		case 0:
			if err != nil {
				c.i.t.Fatalf("a fresh proof: %v", err)
			}
			ok++
		case http.StatusTooManyRequests:
			limited++
		default:
			c.i.t.Fatalf("a fresh proof: %v", err)
		}
	}
	return ok, limited
}

// replayStores are the shared stores, each on a real server; stop stops
// the server.
func replayStores(t *testing.T) map[string]func() (resourceserver.ReplayStore, func() error) {
	return map[string]func() (resourceserver.ReplayStore, func() error){
		"redis": func() (resourceserver.ReplayStore, func() error) {
			srv := testdb.Redis(t)
			opts, err := redis.ParseURL(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			rdb := redis.NewClient(opts)
			t.Cleanup(func() { rdb.Close() })
			return redisstore.NewLimitStore(rdb, &redisstore.Options{Timeout: 2 * time.Second}), srv.Stop
		},
		"postgres": func() (resourceserver.ReplayStore, func() error) {
			srv := testdb.Postgres(t)
			pool, err := pgxpool.New(context.Background(), srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
			s, err := pgstore.NewLimitStore(context.Background(), pool, &pgstore.Options{Timeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			return s, srv.Stop
		},
	}
}

// TestDPoPReplayShared: replicas sharing a replay store accept a proof
// once between them, also when it reaches all of them at the same moment;
// the per-principal bound is theirs together; a store that stops answers
// 503 and lets no proof through.
func TestDPoPReplayShared(t *testing.T) {
	for name, open := range replayStores(t) {
		t.Run(name, func(t *testing.T) {
			store, stop := open()
			iss := newDPoPIssuer(t)
			alice, bob := iss.client("alice"), iss.client("bob")
			var replicas []*resourceserver.Guard
			for range 3 {
				replicas = append(replicas, iss.guard(store, 6))
			}
			// One proof sent to every replica at once, four times each.
			proof := alice.proof()
			var wg sync.WaitGroup
			var mu sync.Mutex
			accepted := 0
			for i := range 12 {
				wg.Go(func() {
					err := alice.check(replicas[i%3], proof)
					mu.Lock()
					defer mu.Unlock()
					if err == nil {
						accepted++
					} else if !strings.Contains(err.Error(), "replayed") {
						t.Errorf("a replay: %v", err)
					}
				})
			}
			wg.Wait()
			if accepted != 1 {
				t.Fatalf("one proof sent 12 times to 3 replicas was accepted %d times, want once", accepted)
			}
			// The bound is shared: 5 more of alice's proofs fit, spread over
			// the replicas; then 429 on each.
			ok, limited := 0, 0
			for i := range 9 {
				a, l := alice.hammer(replicas[i%3], 1)
				ok, limited = ok+a, limited+l
			}
			if ok != 5 || limited != 4 {
				t.Errorf("alice's proofs over 3 replicas: %d accepted, %d refused with 429; want 5 and 4", ok, limited)
			}
			if a, l := bob.hammer(replicas[1], 3); a != 3 || l != 0 {
				t.Errorf("bob: %d accepted, %d refused; want 3 and 0", a, l)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			if err := bob.check(replicas[0], bob.proof()); refusalStatus(err) != http.StatusServiceUnavailable {
				t.Errorf("a fresh proof with the store stopped: %v, want 503", err)
			}
		})
	}
}

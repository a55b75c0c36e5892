package resourceserver_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"net/http"
	"net/http/httptest"
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

// as returns the environment of another client of the same issuer: its
// own DPoP key, and a token bound to it for sub.
func (p *proofEnv) as(sub string) *proofEnv {
	p.t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	d, err := oauthflow.NewDPoP(key)
	if err != nil {
		p.t.Fatal(err)
	}
	q := *p
	q.key, q.jwk = key, mustJWK(p.t, key)
	q.tok = joseSign(p.t, jose.RS256, p.rk, "r", nil, map[string]any{
		"iss": p.iss, "sub": sub, "aud": p.resource, "exp": time.Now().Unix() + 600,
		"cnf": map[string]any{"jkt": d.Thumbprint()},
	})
	return &q
}

func status(err error) int {
	var e *resourceserver.Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// hammer sends n fresh proofs of p to g and returns how many were
// accepted and how many refused with 429.
func hammer(p *proofEnv, g *resourceserver.Guard, n int) (ok, limited int) {
	for range n {
		switch err := p.check(g, http.MethodPost, p.resource, p.proof(nil)); status(err) {
		case 0:
			if err != nil {
				p.t.Fatalf("a fresh proof: %v", err)
			}
			ok++
		case http.StatusTooManyRequests:
			limited++
		default:
			p.t.Fatalf("a fresh proof: %v", err)
		}
	}
	return ok, limited
}

// TestDPoPReplayPerPrincipal: a client that sends fresh proofs faster than
// the replay store keeps them for one principal is answered 429 with
// Retry-After, and only it: another principal's proofs are accepted, and
// the flooding client's old proof is still refused as a replay.
func TestDPoPReplayPerPrincipal(t *testing.T) {
	alice := newProofEnv(t)
	bob := alice.as("bob")
	g := alice.guard(func(o *resourceserver.Options) { o.MaxReplayPerPrincipal = 5 })
	first := alice.proof(nil)
	if err := alice.check(g, http.MethodPost, alice.resource, first); err != nil {
		t.Fatal(err)
	}
	if ok, limited := hammer(alice, g, 20); ok != 4 || limited != 16 {
		t.Errorf("alice's flood: %d accepted, %d refused with 429; want 4 and 16", ok, limited)
	}
	if ok, limited := hammer(bob, g, 5); ok != 5 || limited != 0 {
		t.Errorf("bob during alice's flood: %d accepted, %d refused; want 5 and 0", ok, limited)
	}
	if err := alice.check(g, http.MethodPost, alice.resource, first); status(err) != http.StatusUnauthorized || !strings.Contains(err.Error(), "replayed") {
		t.Errorf("alice's first proof again: %v, want 401 replayed", err)
	}
	// Over HTTP: 429 with Retry-After.
	h := g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("a refused request reached the gateway") }))
	r := httptest.NewRequest(http.MethodPost, alice.resource, nil)
	r.Header.Set("Authorization", "DPoP "+alice.tok)
	r.Header.Set("DPoP", alice.proof(nil))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Errorf("over HTTP: %d, Retry-After %q; want 429 with Retry-After", w.Code, w.Header().Get("Retry-After"))
	}
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
			alice := newProofEnv(t)
			bob := alice.as("bob")
			var replicas []*resourceserver.Guard
			for range 3 {
				replicas = append(replicas, alice.guard(func(o *resourceserver.Options) {
					o.ReplayStore = store
					o.MaxReplayPerPrincipal = 6
				}))
			}
			// One proof sent to every replica at once, four times each.
			proof := alice.proof(nil)
			var wg sync.WaitGroup
			var mu sync.Mutex
			accepted := 0
			for i := range 12 {
				wg.Go(func() {
					err := alice.check(replicas[i%3], http.MethodPost, alice.resource, proof)
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
				a, l := hammer(alice, replicas[i%3], 1)
				ok, limited = ok+a, limited+l
			}
			if ok != 5 || limited != 4 {
				t.Errorf("alice's proofs over 3 replicas: %d accepted, %d refused with 429; want 5 and 4", ok, limited)
			}
			if a, l := hammer(bob, replicas[1], 3); a != 3 || l != 0 {
				t.Errorf("bob: %d accepted, %d refused; want 3 and 0", a, l)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			err := alice.check(replicas[2], http.MethodPost, alice.resource, bob.proof(nil))
			if err == nil {
				t.Fatal("a proof was accepted with the replay store stopped")
			}
			fresh := bob.proof(nil)
			if err := bob.check(replicas[0], http.MethodPost, bob.resource, fresh); status(err) != http.StatusServiceUnavailable {
				t.Errorf("a fresh proof with the store stopped: %v, want 503", err)
			}
		})
	}
}

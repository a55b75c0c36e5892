package gateway

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// JSON-RPC error codes of Limits.
const (
	// CodeLimited: the call is over a rate limit or a concurrency cap of
	// Limits; the message names the limit, the error's data (LimitData)
	// says when to retry. It is the JSON-RPC counterpart of HTTP 429: the
	// HTTP response itself is 200, as for every JSON-RPC error.
	CodeLimited = -32029
	// CodeLimitsUnavailable: the limits' store failed or did not answer
	// in time and Limits.FailOpen is false; the data says when to retry.
	CodeLimitsUnavailable = -32028
)

// Defaults of Limits.
const (
	DefaultLeaseTTL          = 30 * time.Second
	DefaultLimitStoreTimeout = time.Second
	// limitStoreRetry is the retry time a client is given when the store
	// cannot be reached and Limits.FailOpen is false.
	limitStoreRetry = time.Second
)

// Limits are rate limits and concurrency caps on tool calls, by principal,
// server and tool, kept in a LimitStore that replicas share. A call is
// checked after the policy allows it and before it is forwarded; a call
// over a limit gets a JSON-RPC error with code CodeLimited whose data
// says when to retry (LimitData).
type Limits struct {
	// Rules are the limits; a call counts against every rule it matches,
	// except that a call refused by a limit of its principal counts
	// against no limit shared with other principals.
	Rules []LimitRule
	// Store keeps the counters and leases; nil means one in memory, for a
	// gateway of one process. Replicas share a redisstore.LimitStore or a
	// pgstore.LimitStore.
	Store LimitStore
	// FailOpen lets calls through, unlimited, while the store fails or
	// does not answer within StoreTimeout (each such call is logged).
	// False (the default) refuses them with CodeLimitsUnavailable: a
	// limit that protects a server or a budget holds while the store is
	// down.
	FailOpen bool
	// StoreTimeout bounds each store operation; zero means
	// DefaultLimitStoreTimeout. A slower answer counts as a failure.
	StoreTimeout time.Duration
	// LeaseTTL is how long a concurrency slot stays taken without its
	// holder renewing it (every third of LeaseTTL while the call runs):
	// the longest a replica that died mid-call keeps a slot. Zero means
	// DefaultLeaseTTL.
	LeaseTTL time.Duration
}

// A LimitRule is one rate limit or concurrency cap (or both). It counts the
// calls it matches, separately for each value of what Per names: Per
// "principal" gives each principal its own limit; an empty Per shares one
// limit among all calls that match.
type LimitRule struct {
	// Name names the rule in errors and logs and in the store's keys
	// (replicas must give a rule the same name); empty means a name
	// derived from the rule's settings.
	Name string
	// Principal, Server and Tool select the calls counted: path.Match
	// patterns ("*", "search_*") of the principal, the server's name and
	// the server's name for the tool; empty matches any.
	Principal, Server, Tool string
	// Per names what gets a counter of its own: any of "principal",
	// "server", "tool", comma-separated.
	Per string
	// Rate and Period allow Rate calls per Period (evenly spread, the
	// generic cell rate algorithm), with bursts of up to Burst calls
	// (zero: Rate). A zero Rate sets no rate limit.
	Rate   int
	Period time.Duration
	Burst  int
	// Concurrent caps the calls in flight; zero sets no cap.
	Concurrent int
}

// LimitStore keeps the state of Limits. The redisstore and pgstore
// modules' LimitStore types implement it for replicas; each operation is
// atomic in the store and uses the store's clock.
type LimitStore interface {
	// Take takes one call from the rate limit key, which allows one call
	// per interval and bursts of up to burst; when none is left it returns
	// ok false and the time after which one is.
	Take(ctx context.Context, key string, interval time.Duration, burst int) (ok bool, retryAfter time.Duration, err error)
	// Acquire takes one of the max slots of the cap key as lease for ttl;
	// when all are held it returns ok false and a time to retry after.
	Acquire(ctx context.Context, key, lease string, max int, ttl time.Duration) (ok bool, retryAfter time.Duration, err error)
	// Renew extends a held lease by ttl; false: it had lapsed.
	Renew(ctx context.Context, key, lease string, ttl time.Duration) (bool, error)
	// Release gives a lease back.
	Release(ctx context.Context, key, lease string) error
}

// LimitData is the data of a CodeLimited or CodeLimitsUnavailable error.
type LimitData struct {
	// Limit is the rule's name; Kind is "rate", "concurrency" or "store".
	Limit string `json:"limit"`
	Kind  string `json:"kind"`
	// RetryAfterMs is how long to wait before trying again, in
	// milliseconds (at least 1).
	RetryAfterMs int64 `json:"retryAfterMs"`
}

// quota applies Limits.
type quota struct {
	rules    []limitRule
	store    LimitStore
	failOpen bool
	timeout  time.Duration
	leaseTTL time.Duration
	log      *slog.Logger
}

type limitRule struct {
	LimitRule
	perPrincipal, perServer, perTool bool
	interval                         time.Duration
	burst                            int
}

// newQuota checks l and returns what applies it; nil when l has no rules.
func newQuota(l *Limits, log *slog.Logger) (*quota, error) {
	if l == nil || len(l.Rules) == 0 {
		return nil, nil
	}
	q := &quota{store: l.Store, failOpen: l.FailOpen, timeout: l.StoreTimeout, leaseTTL: l.LeaseTTL, log: log}
	if q.store == nil {
		q.store = newMemoryLimits()
	}
	if q.timeout <= 0 {
		q.timeout = DefaultLimitStoreTimeout
	}
	if q.leaseTTL <= 0 {
		q.leaseTTL = DefaultLeaseTTL
	}
	var errs []error
	names := map[string]bool{}
	for i, r := range l.Rules {
		lr, err := checkRule(r)
		if err != nil {
			errs = append(errs, fmt.Errorf("gateway: Limits.Rules[%d]: %w", i, err))
			continue
		}
		if names[lr.Name] {
			errs = append(errs, fmt.Errorf("gateway: Limits.Rules[%d]: another rule is named %q", i, lr.Name))
		}
		names[lr.Name] = true
		q.rules = append(q.rules, lr)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// The counters of one principal are taken first: a call that one of
	// them refuses has taken nothing from a counter others share.
	slices.SortStableFunc(q.rules, func(a, b limitRule) int {
		switch {
		case a.perPrincipal == b.perPrincipal:
			return 0
		case a.perPrincipal:
			return -1
		}
		return 1
	})
	return q, nil
}

// checkRule reports what is wrong with r, or returns it ready to apply.
func checkRule(r LimitRule) (limitRule, error) {
	lr := limitRule{LimitRule: r}
	for _, p := range []string{r.Principal, r.Server, r.Tool} {
		if _, err := path.Match(p, ""); err != nil {
			return lr, fmt.Errorf("pattern %q: %w", p, err)
		}
	}
	for _, p := range strings.Split(r.Per, ",") {
		switch strings.TrimSpace(p) {
		case "":
		case "principal":
			lr.perPrincipal = true
		case "server":
			lr.perServer = true
		case "tool":
			lr.perTool = true
		default:
			return lr, fmt.Errorf("per %q: want principal, server or tool", p)
		}
	}
	switch {
	case r.Rate < 0 || r.Burst < 0 || r.Concurrent < 0:
		return lr, errors.New("a negative Rate, Burst or Concurrent")
	case r.Rate == 0 && r.Concurrent == 0:
		return lr, errors.New("neither Rate nor Concurrent is set")
	case r.Rate > 0 && r.Period <= 0:
		return lr, errors.New("a Rate needs a Period")
	case r.Rate > 0 && r.Period/time.Duration(r.Rate) < time.Microsecond:
		return lr, errors.New("a Rate over one call per microsecond in its Period")
	}
	if r.Rate > 0 {
		lr.interval = r.Period / time.Duration(r.Rate)
		lr.burst = r.Burst
		if lr.burst == 0 {
			lr.burst = r.Rate
		}
	}
	if lr.Name == "" {
		b, _ := json.Marshal(r)
		sum := sha256.Sum256(b)
		lr.Name = "limit-" + hex.EncodeToString(sum[:6])
	}
	return lr, nil
}

func (r *limitRule) matches(principal, server, tool string) bool {
	m := func(pat, s string) bool {
		ok, _ := path.Match(pat, s)
		return pat == "" || ok
	}
	return m(r.Principal, principal) && m(r.Server, server) && m(r.Tool, tool)
}

// key is the store key of the counter the call counts against. Each part
// is quoted, so no name can pose as another's.
func (r *limitRule) key(principal, server, tool string) string {
	k := fmt.Sprintf("%q", r.Name)
	if r.perPrincipal {
		k += fmt.Sprintf(" p%q", principal)
	}
	if r.perServer {
		k += fmt.Sprintf(" s%q", server)
	}
	if r.perTool {
		k += fmt.Sprintf(" t%q", tool)
	}
	return k
}

// who describes the counter of key for a client.
func (r *limitRule) who(principal, server, tool string) string {
	var parts []string
	if r.perPrincipal {
		parts = append(parts, fmt.Sprintf("principal %q", principal))
	}
	if r.perServer {
		parts = append(parts, fmt.Sprintf("server %q", server))
	}
	if r.perTool {
		parts = append(parts, fmt.Sprintf("tool %q", tool))
	}
	if len(parts) == 0 {
		return "all matching calls"
	}
	return strings.Join(parts, ", ")
}

// heldLease is a concurrency slot a call holds.
type heldLease struct{ key, id string }

// admit checks the call of tool (the server's name for it) on server for
// principal against every rule it matches: it takes a slot of each cap
// first, then a call from each rate limit (those counted per principal
// before those shared), and returns what gives the slots back when the
// call ends. A refused call holds no slot; the calls it took from rate
// limits are not given back, but a call refused by a limit of its
// principal takes nothing from a limit shared with others.
func (q *quota) admit(ctx context.Context, principal, server, tool string) (release func(), err error) {
	if q == nil {
		return func() {}, nil
	}
	held, err := q.acquire(ctx, principal, server, tool)
	if err != nil {
		return nil, err
	}
	undo := func() { q.release(held) }
	for i := range q.rules {
		r := &q.rules[i]
		if r.Rate == 0 || !r.matches(principal, server, tool) {
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, q.timeout)
		ok, retry, err := q.store.Take(sctx, r.key(principal, server, tool), r.interval, r.burst)
		cancel()
		if err != nil {
			if q.storeFailed(ctx, r, err) {
				continue
			}
			undo()
			return nil, errLimitsUnavailable(r.Name)
		}
		if !ok {
			undo()
			return nil, errLimited(r.Name, "rate", retry,
				fmt.Sprintf("%s made %d calls in %s, the most limit %q allows", r.who(principal, server, tool), r.Rate, r.Period, r.Name))
		}
	}
	if len(held) == 0 {
		return func() {}, nil
	}
	return q.hold(held), nil
}

// slots takes a slot of each cap the call matches, and takes nothing
// from the rate limits: what a call admitted before takes again after it
// gave its slots back while it waited for no server (its user's sign-in).
func (q *quota) slots(ctx context.Context, principal, server, tool string) (release func(), err error) {
	if q == nil {
		return func() {}, nil
	}
	held, err := q.acquire(ctx, principal, server, tool)
	if err != nil {
		return nil, err
	}
	if len(held) == 0 {
		return func() {}, nil
	}
	return q.hold(held), nil
}

// acquire takes a slot of each cap the call matches, or none (an error).
func (q *quota) acquire(ctx context.Context, principal, server, tool string) ([]heldLease, error) {
	var held []heldLease
	undo := func() { q.release(held) }
	lease := rand.Text()
	for i := range q.rules {
		r := &q.rules[i]
		if r.Concurrent == 0 || !r.matches(principal, server, tool) {
			continue
		}
		key := r.key(principal, server, tool)
		sctx, cancel := context.WithTimeout(ctx, q.timeout)
		ok, retry, err := q.store.Acquire(sctx, key, lease, r.Concurrent, q.leaseTTL)
		cancel()
		if err != nil {
			if q.storeFailed(ctx, r, err) {
				continue
			}
			undo()
			return nil, errLimitsUnavailable(r.Name)
		}
		if !ok {
			undo()
			return nil, errLimited(r.Name, "concurrency", retry,
				fmt.Sprintf("%d calls of %s are in flight, the most limit %q allows", r.Concurrent, r.who(principal, server, tool), r.Name))
		}
		held = append(held, heldLease{key, lease})
	}
	return held, nil
}

// storeFailed logs a store failure and reports whether the call goes on
// (Limits.FailOpen).
func (q *quota) storeFailed(ctx context.Context, r *limitRule, err error) bool {
	if q.failOpen {
		q.log.WarnContext(ctx, "gateway: limit store failed; the call goes on unlimited (Limits.FailOpen)", "limit", r.Name, "err", err)
		return true
	}
	q.log.ErrorContext(ctx, "gateway: limit store failed; the call is refused", "limit", r.Name, "err", err)
	return false
}

// hold renews the leases every third of their TTL until the returned
// function, which releases them, is called.
func (q *quota) hold(held []heldLease) (release func()) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(q.leaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			for _, h := range held {
				ok, err := q.renew(h)
				if err != nil || !ok {
					q.log.Warn("gateway: could not renew a concurrency slot; it may be given to another call", "key", h.key, "lapsed", !ok, "err", err)
				}
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			<-done
			q.release(held)
		})
	}
}

// renew renews lease h, on hold's goroutine, which net/http does not
// recover: a panic of the LimitStore is logged and taken as a failure.
func (q *quota) renew(h heldLease) (ok bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), q.timeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			logPanic(q.log, p, "the limit store, renewing a concurrency slot")
			ok, err = false, errLimitStorePanicked
		}
	}()
	return q.store.Renew(ctx, h.key, h.id, q.leaseTTL)
}

// errLimitStorePanicked: the LimitStore panicked (logged).
var errLimitStorePanicked = errors.New("the limit store panicked")

func (q *quota) release(held []heldLease) {
	for _, h := range held {
		ctx, cancel := context.WithTimeout(context.Background(), q.timeout)
		if err := q.store.Release(ctx, h.key, h.id); err != nil {
			q.log.Warn("gateway: could not release a concurrency slot; it lapses after Limits.LeaseTTL", "key", h.key, "err", err)
		}
		cancel()
	}
}

func retryMs(d time.Duration) int64 {
	ms := (d + time.Millisecond - 1) / time.Millisecond
	return max(int64(ms), 1)
}

func errLimited(name, kind string, retry time.Duration, why string) *jsonrpc.Error {
	data, _ := json.Marshal(LimitData{Limit: name, Kind: kind, RetryAfterMs: retryMs(retry)})
	return &jsonrpc.Error{Code: CodeLimited, Message: fmt.Sprintf("%s; retry after %s", why, time.Duration(retryMs(retry))*time.Millisecond), Data: data}
}

func errLimitsUnavailable(name string) *jsonrpc.Error {
	data, _ := json.Marshal(LimitData{Limit: name, Kind: "store", RetryAfterMs: retryMs(limitStoreRetry)})
	return &jsonrpc.Error{Code: CodeLimitsUnavailable, Message: fmt.Sprintf("the gateway cannot check limit %q now (its store does not answer); retry after %s", name, limitStoreRetry), Data: data}
}

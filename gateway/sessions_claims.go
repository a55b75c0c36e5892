package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A request of a shared session in flight belongs to the replica running
// it, and each replica refuses a request whose id is in flight on itself
// (liveSessions, go-sdk's handler). So that a client sending a request
// again under the id of one in flight on another replica (its connection
// dropped, its balancer retried elsewhere) does not have it run twice,
// a replica claims the id of each request of a POST that could do harm
// run twice (a tool call; claimed) in the store
// (SessionStore.ClaimRequest) before it serves the POST: a claim held,
// by any replica, has the POST refused as a duplicate in-flight id is
// (400 and a JSON-RPC error, writeDuplicateID); a store that fails or
// outlasts StoreTimeout has it refused with 503, never run unclaimed.
//
// A claim is released (SessionStore.ReleaseRequest) once its request is
// over, before its answer reaches the client, so that the id is free
// again once the client has the answer, as go-sdk frees an id on one
// replica: on the session fast path when the call's answer is about to
// be written (fastConn.answering), on go-sdk's path when go-sdk writes
// the request's answer (the event store's Append, on the POST's stream:
// answered). What is still held when the POST's handler returns is
// released then, unless the POST went to go-sdk's handler and its client
// went away first: go-sdk's session still runs those requests (a
// disconnection cancels no call), and their claims wait for their
// answers. The claims of a session's copy that ends here (DELETE, its
// idle timer), and every claim when the gateway closes, are released
// too.
//
// Each claim names its owner, a token made for it (claimOwner), and
// lives for a lease (claimLease) that the replica holding it renews
// while it holds it: one goroutine of the replica's (renewClaims)
// extends every claim held here every third of a lease
// (SessionStore.RenewRequest, only the owner's claim; renewWorkers at
// once, a claim whose renewal fails left to the next round while the
// round goes on), so that a call running longer than a lease keeps its
// id. A release removes the claim
// only if it is still the owner's: a claim that expired (its renewals
// failed for a lease) and was made again by another replica stays that
// replica's. A renewal that finds the claim gone or another's has this
// replica forget it, with a warning: the call goes on, its id no longer
// claimed. A claim no replica holds any more blocks its id for a lease
// at most: one whose replica died, one whose release failed, and one
// the store wrote after claim stopped waiting for it (past
// StoreTimeout: the POST was refused with 503).

// maxClaimKey bounds the key of a request id in a claim: a longer id is
// named by its hash.
const maxClaimKey = 64

// claimKey names request id in a claim: "n" and a number, "s" and a
// string (so that 1 and "1" are two ids, as they are to go-sdk; "x" and
// its JSON for any other), or "h" and the hex SHA-256 of one of those
// over maxClaimKey bytes.
func claimKey(id jsonrpc.ID) string {
	var k string
	switch v := id.Raw().(type) {
	case int64:
		k = "n" + strconv.FormatInt(v, 10)
	case string:
		k = "s" + v
	default:
		b, _ := json.Marshal(v)
		k = "x" + string(b)
	}
	if len(k) > maxClaimKey {
		sum := sha256.Sum256([]byte(k))
		k = "h" + hex.EncodeToString(sum[:])
	}
	return k
}

// claimLease is how long a claim lives unless its replica renews it,
// which it does every third of it; a store timeout that is long makes
// it longer (leaseTTL).
const claimLease = 2 * time.Minute

// leaseTTL is the lease of a claim: claimLease, or ten store timeouts
// when that is longer (a renewal may take one), never longer than the
// record of the claim's session lives after its last request.
func (s *sharedSessions) leaseTTL() time.Duration {
	d := max(claimLease, 10*s.timeout)
	if s.lease > 0 {
		d = s.lease
	}
	return min(d, s.ttl+s.ttl/4)
}

// claimOwner returns a token naming one claim of this replica's: the
// replica's token and a number.
func (s *sharedSessions) claimOwner() string {
	return s.replicaToken + "." + strconv.FormatUint(s.nowner.Add(1), 36)
}

// postClaims are the request ids of one POST of a shared session this
// replica claimed and has not released.
type postClaims struct {
	s       *sharedSessions
	session string
	owner   string // the owner of its claims in the store

	// Guarded by sharedSessions.claimMu.
	ids    map[jsonrpc.ID]struct{} // claimed, not released
	stream string                  // go-sdk's stream of the POST, once opened
	sdk    bool                    // the POST went to go-sdk's handler
}

// claimsKey carries a POST's *postClaims to the event store, which go-sdk
// opens the POST's stream with on the POST's goroutine, and to the
// session fast path.
type claimsKey struct{}

// errClaimsClosed: the gateway is closing; no request is claimed.
var errClaimsClosed = errors.New("the gateway is shutting down")

// claim claims ids, those of the requests of a POST of session, in the
// store: it returns the claims, or the id of one claimed already (dup;
// nothing is then claimed), or the store's error (nothing claimed).
func (s *sharedSessions) claim(ctx context.Context, session string, ids []jsonrpc.ID) (p *postClaims, dup jsonrpc.ID, err error) {
	p = &postClaims{s: s, session: session, owner: s.claimOwner(), ids: make(map[jsonrpc.ID]struct{}, len(ids))}
	undo := func() {
		for id := range p.ids {
			s.releaseOne(ctx, session, id, p.owner)
		}
	}
	lease := s.leaseTTL()
	for _, id := range ids {
		if _, twice := p.ids[id]; twice {
			continue // a batch naming an id twice: go-sdk's to answer
		}
		cctx, cancel := context.WithTimeout(ctx, s.timeout)
		ok, err := s.store.ClaimRequest(cctx, session, claimKey(id), p.owner, lease)
		cancel()
		if err != nil {
			undo()
			return nil, jsonrpc.ID{}, err
		}
		if !ok {
			undo()
			return nil, id, nil
		}
		p.ids[id] = struct{}{}
	}
	s.claimMu.Lock()
	if s.claimsShut {
		s.claimMu.Unlock()
		undo()
		return nil, jsonrpc.ID{}, errClaimsClosed
	}
	if s.claims == nil {
		s.claims = make(map[string]map[*postClaims]struct{})
	}
	if s.claims[session] == nil {
		s.claims[session] = make(map[*postClaims]struct{})
	}
	s.claims[session][p] = struct{}{}
	if s.renewStop == nil {
		rctx, stop := context.WithCancel(context.Background())
		s.renewStop = stop
		s.renewing.Go(func() { s.renewClaims(rctx) })
	}
	s.claimMu.Unlock()
	return p, jsonrpc.ID{}, nil
}

// releaseOne removes owner's claim of id in session from the store; a
// store that fails leaves it to expire (within a lease: it is no longer
// renewed).
func (s *sharedSessions) releaseOne(ctx context.Context, session string, id jsonrpc.ID, owner string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	if err := s.store.ReleaseRequest(ctx, session, claimKey(id), owner); err != nil && s.warn != nil {
		s.warn("the session store failed to release the claim of a request; it expires within its lease", "err", err)
	}
}

// take takes id (every id when all) out of p's claims, forgetting p once
// it holds none, and returns those it held, to release.
func (p *postClaims) take(id jsonrpc.ID, all bool) []jsonrpc.ID {
	s := p.s
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	var out []jsonrpc.ID
	if all {
		for id := range p.ids {
			out = append(out, id)
		}
		clear(p.ids)
	} else if _, held := p.ids[id]; held {
		out = append(out, id)
		delete(p.ids, id)
	}
	if len(p.ids) == 0 {
		s.forgetLocked(p)
	}
	return out
}

// release releases ids of p in the store.
func (p *postClaims) release(ids []jsonrpc.ID) {
	for _, id := range ids {
		p.s.releaseOne(context.Background(), p.session, id, p.owner)
	}
}

// releaseAll releases every claim p holds: the session fast path calls it
// before it writes the call's answer.
func (p *postClaims) releaseAll() { p.release(p.take(jsonrpc.ID{}, true)) }

// forgetLocked forgets p (guarded by claimMu).
func (s *sharedSessions) forgetLocked(p *postClaims) {
	if m := s.claims[p.session]; m != nil {
		delete(m, p)
		if len(m) == 0 {
			delete(s.claims, p.session)
		}
	}
	if p.stream != "" && s.streams[p.session+"\x00"+p.stream] == p {
		delete(s.streams, p.session+"\x00"+p.stream)
		s.nstreams.Add(-1)
	}
}

// toSDK records that p's POST goes to go-sdk's handler.
func (p *postClaims) toSDK() {
	p.s.claimMu.Lock()
	p.sdk = true
	p.s.claimMu.Unlock()
}

// end is called when p's POST's handler returns: gone says its client
// went away first (its context ended), refused that go-sdk refused the
// POST (an error status). Its claims are released, but those of a POST
// in go-sdk's handler whose client went away: go-sdk's session still
// runs those requests, and each claim is released when its answer is
// written (answered), or the session's copy here ends.
func (p *postClaims) end(gone, refused bool) {
	p.s.claimMu.Lock()
	keep := p.sdk && gone && !refused
	p.s.claimMu.Unlock()
	if !keep {
		p.releaseAll()
	}
}

// openedClaims records the stream go-sdk opened for the POST whose
// claims ctx carries, if any.
func (s *sharedSessions) openedClaims(ctx context.Context, session, stream string) {
	p, _ := ctx.Value(claimsKey{}).(*postClaims)
	if p == nil || p.session != session {
		return
	}
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	if len(p.ids) == 0 || p.stream != "" {
		return
	}
	if s.streams == nil {
		s.streams = make(map[string]*postClaims)
	}
	p.stream = stream
	s.streams[session+"\x00"+stream] = p
	s.nstreams.Add(1)
}

// answered releases the claim of the request data answers, when data, a
// message go-sdk writes on stream of session, answers a request claimed:
// go-sdk calls it before the answer reaches the client, so that the id is
// free again once the client has the answer, as it is on one replica.
func (s *sharedSessions) answered(session, stream string, data []byte) {
	if s.nstreams.Load() == 0 {
		return
	}
	s.claimMu.Lock()
	p := s.streams[session+"\x00"+stream]
	s.claimMu.Unlock()
	if p == nil {
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(data, &m) != nil || len(m.ID) == 0 || m.Method != "" {
		return
	}
	if ids := rpcIDs([]json.RawMessage{m.ID}); len(ids) == 1 {
		p.release(p.take(ids[0], false))
	}
}

// releaseSession releases the claims of session held here, whose copy
// here has ended, on a goroutine of its own (the caller holds go-sdk's
// lock of the session's connection); Close waits for it.
func (s *sharedSessions) releaseSession(session string) {
	s.claimMu.Lock()
	var ps []*postClaims
	var ids [][]jsonrpc.ID
	for p := range s.claims[session] {
		ps = append(ps, p)
		list := make([]jsonrpc.ID, 0, len(p.ids))
		for id := range p.ids {
			list = append(list, id)
		}
		clear(p.ids)
		ids = append(ids, list)
		s.forgetLocked(p)
	}
	if len(ps) > 0 {
		s.releasing.Add(1)
	}
	s.claimMu.Unlock()
	if len(ps) == 0 {
		return
	}
	go func() {
		defer s.releasing.Done()
		for i, p := range ps {
			p.release(ids[i])
		}
	}()
}

// releaseClaims ends the renewals, releases every claim held here and
// waits for the releases under way: the gateway is closing (shut has
// been called, so no claim is made from now on).
func (s *sharedSessions) releaseClaims() {
	s.claimMu.Lock()
	s.claimsShut = true
	sessions := make([]string, 0, len(s.claims))
	for session := range s.claims {
		sessions = append(sessions, session)
	}
	if s.renewStop != nil {
		s.renewStop()
	}
	s.claimMu.Unlock()
	s.renewing.Wait()
	for _, session := range sessions {
		s.releaseSession(session)
	}
	s.releasing.Wait()
}

// renewClaims renews every claim held here every third of a lease, until
// ctx ends (releaseClaims). It is started with the first claim held.
func (s *sharedSessions) renewClaims(ctx context.Context) {
	t := time.NewTicker(s.leaseTTL() / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.renewHeld(ctx)
	}
}

// heldClaim is a claim held here: id of p's POST.
type heldClaim struct {
	p  *postClaims
	id jsonrpc.ID
}

// renewWorkers bounds the renewals of one round under way at once: a
// round of many claims takes a few store round trips, not one a claim,
// so that a store slow to answer (within StoreTimeout) still renews each
// claim within its lease.
const renewWorkers = 16

// renewHeld renews each claim held here once, renewWorkers at a time. A
// claim the store no longer has as its owner's is forgotten (lost); one
// the store fails to renew is left to the next round, and the round goes
// on with the others (a store may fail for some keys only: a Redis Ring
// or Cluster with a node down), with one warning a round.
func (s *sharedSessions) renewHeld(ctx context.Context) {
	s.claimMu.Lock()
	var held []heldClaim
	for _, ps := range s.claims {
		for p := range ps {
			for id := range p.ids {
				held = append(held, heldClaim{p, id})
			}
		}
	}
	s.claimMu.Unlock()
	lease := s.leaseTTL()
	var (
		mu      sync.Mutex
		failed  error
		nfailed int
		wg      sync.WaitGroup
	)
	next := make(chan heldClaim)
	for range min(renewWorkers, len(held)) {
		wg.Go(func() {
			for c := range next {
				cctx, cancel := context.WithTimeout(ctx, s.timeout)
				ok, err := s.store.RenewRequest(cctx, c.p.session, claimKey(c.id), c.p.owner, lease)
				cancel()
				switch {
				case ctx.Err() != nil:
				case err != nil:
					mu.Lock()
					failed = err
					nfailed++
					mu.Unlock()
				case !ok:
					c.p.lost(c.id)
				}
			}
		})
	}
feed:
	for _, c := range held {
		select {
		case next <- c:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if failed != nil && ctx.Err() == nil && s.warn != nil {
		s.warn("the session store failed to renew the claims of requests; renewing them again soon", "failed", nfailed, "of", len(held), "err", failed)
	}
}

// lost forgets the claim of id, which the store no longer has as p's
// (it expired; another replica may have claimed id since), unless it
// was released meanwhile: it is not released, the call goes on.
func (p *postClaims) lost(id jsonrpc.ID) {
	s := p.s
	s.claimMu.Lock()
	_, held := p.ids[id]
	if held {
		delete(p.ids, id)
		if len(p.ids) == 0 {
			s.forgetLocked(p)
		}
	}
	s.claimMu.Unlock()
	if held && s.warn != nil {
		s.warn("the claim of a request in flight expired in the session store before it was renewed; the request goes on, and one sent again under its id may run on another replica")
	}
}

// claimState is what sharedSessions keeps of the claims held here.
type claimState struct {
	claimMu sync.Mutex
	// claims are the POSTs holding claims here, by session; streams
	// those in go-sdk's handler, by session and stream (NUL between),
	// nstreams how many.
	claims     map[string]map[*postClaims]struct{}
	streams    map[string]*postClaims
	nstreams   atomic.Int32
	releasing  sync.WaitGroup
	claimsShut bool // releaseClaims has begun: no claim is made
	warn       func(msg string, args ...any)
	nowner     atomic.Uint64 // claims made here (claimOwner)
	// renewStop ends renewClaims, started with the first claim held
	// (nil until then); renewing waits for it.
	renewStop context.CancelFunc
	renewing  sync.WaitGroup
	lease     time.Duration // a test's lease of claims instead of leaseTTL's
}

// claimed reports whether a request with method is claimed: any but
// those a client's retry on another replica may run a second time, which
// read, or set what they set again (a log level, a subscription, a task's
// cancellation). tools/call and a method this list does not know are.
func claimed(method string) bool {
	switch method {
	case "ping", "tools/list", "prompts/list", "prompts/get",
		"resources/list", "resources/templates/list", "resources/read",
		"resources/subscribe", "resources/unsubscribe", "completion/complete",
		"logging/setLevel", "tasks/get", "tasks/list", "tasks/result", "tasks/cancel":
		return false
	}
	return true
}

// claimPost claims the ids of the requests in body, a POST of shared
// session id, but those of requests that change nothing run a second time
// (claimed): claiming costs two store round trips per request. A POST
// refused (an id claimed already: as go-sdk refuses a duplicate in-flight
// id; the store failing or closing: 503) is answered here, and ok is
// false; claims is nil when body holds no request to claim.
func (g *Gateway) claimPost(w http.ResponseWriter, r *http.Request, id string, body []byte) (claims *postClaims, ok bool) {
	ids := rpcIDs(requestIDsOf(body, claimed))
	if len(ids) == 0 {
		return nil, true
	}
	claims, dup, err := g.shared.claim(r.Context(), id, ids)
	switch {
	case errors.Is(err, errClaimsClosed):
		http.Error(w, "the gateway is shutting down; try again", http.StatusServiceUnavailable)
	case err != nil:
		g.log.Warn("the session store failed to claim a request; the request is refused", "err", err)
		http.Error(w, "the gateway's session store is unavailable; try again", http.StatusServiceUnavailable)
	case dup.IsValid():
		writeDuplicateID(w, dup)
	default:
		return claims, true
	}
	return nil, false
}

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
// a replica claims each request id of a POST in the store
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
// too. A claim expires with the session's record (claimTTL): a replica
// that dies holding claims blocks their ids no longer than its sessions
// live. So does a claim whose release failed, and one the store wrote
// after claim stopped waiting for it (past StoreTimeout: the POST was
// refused with 503); a claim holds no owner, so a replica cannot tell
// such a claim from another replica's and leaves it to expire.

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

// claimTTL is how long a claim lives at most: as long as the record of
// its session after its last request.
func (s *sharedSessions) claimTTL() time.Duration { return s.ttl + s.ttl/4 }

// postClaims are the request ids of one POST of a shared session this
// replica claimed and has not released.
type postClaims struct {
	s       *sharedSessions
	session string

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
	p = &postClaims{s: s, session: session, ids: make(map[jsonrpc.ID]struct{}, len(ids))}
	undo := func() {
		for id := range p.ids {
			s.releaseOne(ctx, session, id)
		}
	}
	for _, id := range ids {
		if _, twice := p.ids[id]; twice {
			continue // a batch naming an id twice: go-sdk's to answer
		}
		cctx, cancel := context.WithTimeout(ctx, s.timeout)
		ok, err := s.store.ClaimRequest(cctx, session, claimKey(id), s.claimTTL())
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
	s.claimMu.Unlock()
	return p, jsonrpc.ID{}, nil
}

// releaseOne removes the claim of id in session from the store; a store
// that fails leaves it to expire.
func (s *sharedSessions) releaseOne(ctx context.Context, session string, id jsonrpc.ID) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	if err := s.store.ReleaseRequest(ctx, session, claimKey(id)); err != nil && s.warn != nil {
		s.warn("the session store failed to release the claim of a request; it expires with its session", "err", err)
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
		p.s.releaseOne(context.Background(), p.session, id)
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

// releaseClaims releases every claim held here and waits for the releases
// under way: the gateway is closing (shut has been called, so no claim
// is made from now on).
func (s *sharedSessions) releaseClaims() {
	s.claimMu.Lock()
	s.claimsShut = true
	sessions := make([]string, 0, len(s.claims))
	for session := range s.claims {
		sessions = append(sessions, session)
	}
	s.claimMu.Unlock()
	for _, session := range sessions {
		s.releaseSession(session)
	}
	s.releasing.Wait()
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
	claimsShut bool // releaseAll has begun: no claim is made
	warn       func(msg string, args ...any)
}

// claimPost claims the ids of the requests in body, a POST of shared
// session id. A POST refused (an id claimed already: as go-sdk refuses a
// duplicate in-flight id; the store failing or closing: 503) is answered
// here, and ok is false; claims is nil when body holds no request.
func (g *Gateway) claimPost(w http.ResponseWriter, r *http.Request, id string, body []byte) (claims *postClaims, ok bool) {
	ids := rpcIDs(allRequestIDs(body))
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

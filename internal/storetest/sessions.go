package storetest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// sessionRecords is what the gateway uses of a store module's session
// store for the records of sessions.
type sessionRecords interface {
	LoadSession(ctx context.Context, id string) ([]byte, error)
	SaveSession(ctx context.Context, id string, rec []byte, ttl time.Duration) error
	ReplaceSession(ctx context.Context, id string, old, rec []byte, ttl time.Duration) (bool, error)
	DeleteSession(ctx context.Context, id string) error
}

// SessionStore is what the gateway uses of a store module's session store.
type SessionStore interface {
	sessionRecords
	ClaimRequest(ctx context.Context, session, request, owner string, ttl time.Duration) (bool, error)
	RenewRequest(ctx context.Context, session, request, owner string, ttl time.Duration) (bool, error)
	ReleaseRequest(ctx context.Context, session, request, owner string) error
}

// CheckSessionStore checks s: a record saved is loaded as it was (any
// bytes), a missing one is nil without an error, a save replaces, a
// record expires after its TTL and a save extends it, a delete removes
// it (twice is no error), a replace writes only over the record it names
// (not another one, nor one never saved, deleted or expired) and extends
// it, ids are kept apart, and 32 writers racing on one id leave one of their records
// whole.
func CheckSessionStore(t *testing.T, s SessionStore) {
	checkClaims(t, s, checkRecords(t, s))
}

// checkRecords checks the records of s as CheckSessionStore says, and
// returns the session id it used.
func checkRecords(t *testing.T, s sessionRecords) string {
	ctx := context.Background()
	id := fmt.Sprintf("S%d", time.Now().UnixNano())
	load := func(id string) []byte {
		t.Helper()
		b, err := s.LoadSession(ctx, id)
		if err != nil {
			t.Fatalf("LoadSession(%q): %v", id, err)
		}
		return b
	}
	if b := load(id); b != nil {
		t.Fatalf("a session never saved: %q, want nil", b)
	}
	rec := []byte("{\"principal\":\"alice\",\"bin\":\"\x00\xff\"}")
	if err := s.SaveSession(ctx, id, rec, time.Minute); err != nil {
		t.Fatal(err)
	}
	if b := load(id); !bytes.Equal(b, rec) {
		t.Fatalf("loaded %q, saved %q", b, rec)
	}
	if b := load(id + "x"); b != nil {
		t.Errorf("another id loaded %q", b)
	}
	if err := s.SaveSession(ctx, id, []byte(`{"v":2}`), time.Minute); err != nil {
		t.Fatal(err)
	}
	if b := load(id); string(b) != `{"v":2}` {
		t.Errorf("after a second save: %q", b)
	}
	if err := s.DeleteSession(ctx, id); err != nil {
		t.Fatal(err)
	}
	if b := load(id); b != nil {
		t.Errorf("after delete: %q", b)
	}
	if err := s.DeleteSession(ctx, id); err != nil {
		t.Errorf("deleting twice: %v", err)
	}
	replace := func(id, old, rec string, ttl time.Duration) bool {
		t.Helper()
		ok, err := s.ReplaceSession(ctx, id, []byte(old), []byte(rec), ttl)
		if err != nil {
			t.Fatalf("ReplaceSession(%q): %v", id, err)
		}
		return ok
	}
	if replace(id, `{"v":2}`, "deleted", time.Minute) || load(id) != nil {
		t.Errorf("a deleted record was replaced: %q", load(id))
	}
	if replace(id+"-never", "", "never", time.Minute) || load(id+"-never") != nil {
		t.Errorf("a record never saved was replaced")
	}
	if err := s.SaveSession(ctx, id, []byte("v1"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if replace(id, "v0", "v2", time.Minute) || string(load(id)) != "v1" {
		t.Errorf("a record replaced over another one: %q", load(id))
	}
	if !replace(id, "v1", "v2", time.Minute) || string(load(id)) != "v2" {
		t.Errorf("replacing a record: %q", load(id))
	}
	_ = s.DeleteSession(ctx, id)

	short := id + "-ttl"
	if err := s.SaveSession(ctx, short, []byte("a"), 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond)
	if err := s.SaveSession(ctx, short, []byte("b"), 300*time.Millisecond); err != nil { // extends it
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if b := load(short); string(b) != "b" {
		t.Errorf("a record saved again within its TTL expired: %q", b)
	}
	if !replace(short, "b", "c", 300*time.Millisecond) { // extends it
		t.Errorf("a record within its TTL was not replaced")
	}
	time.Sleep(200 * time.Millisecond)
	if b := load(short); string(b) != "c" {
		t.Errorf("a record replaced within its TTL expired: %q", b)
	}
	deadline := time.Now().Add(5 * time.Second)
	for load(short) != nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if b := load(short); b != nil {
		t.Errorf("a record past its TTL: %q", b)
	}
	if replace(short, "c", "d", time.Minute) || load(short) != nil {
		t.Errorf("a record past its TTL was replaced")
	}

	race := id + "-race"
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			if err := s.SaveSession(ctx, race, bytes.Repeat([]byte{byte('a' + i%26)}, 4096), time.Minute); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	b := load(race)
	if len(b) != 4096 || !bytes.Equal(b, bytes.Repeat(b[:1], 4096)) {
		t.Errorf("after racing saves the record is not one writer's: %d bytes", len(b))
	}
	_ = s.DeleteSession(ctx, race)
	return id
}

// checkClaims checks the claims of requests of s: a claim is made once
// (a second one is refused, whoever makes it), a release by its owner
// lets it be made again (and releasing one not there is no error), a
// release by another owner leaves it, a claim expires after its TTL, a
// renewal by its owner extends it past its TTL, one by another owner or
// of a claim expired reports false and extends nothing, the release of a
// claim expired and made again by another owner leaves the other's
// claim, claims are kept apart by session and by request (and from the
// records of sessions), a long request key and a 64-byte owner are
// taken, and of 32 racers claiming one request exactly one wins.
func checkClaims(t *testing.T, s SessionStore, id string) {
	ctx := context.Background()
	claim := func(session, request, owner string, ttl time.Duration) bool {
		t.Helper()
		ok, err := s.ClaimRequest(ctx, session, request, owner, ttl)
		if err != nil {
			t.Fatalf("ClaimRequest(%q, %q, %q): %v", session, request, owner, err)
		}
		return ok
	}
	renew := func(session, request, owner string, ttl time.Duration) bool {
		t.Helper()
		ok, err := s.RenewRequest(ctx, session, request, owner, ttl)
		if err != nil {
			t.Fatalf("RenewRequest(%q, %q, %q): %v", session, request, owner, err)
		}
		return ok
	}
	release := func(session, request, owner string) {
		t.Helper()
		if err := s.ReleaseRequest(ctx, session, request, owner); err != nil {
			t.Fatalf("ReleaseRequest(%q, %q, %q): %v", session, request, owner, err)
		}
	}
	// expired waits, a few seconds at most, until request in id can be
	// claimed by owner (the claim there expired), and reports whether
	// it could.
	expired := func(request, owner string, ttl time.Duration) bool {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !claim(id, request, owner, ttl) {
			if time.Now().After(deadline) {
				return false
			}
			time.Sleep(50 * time.Millisecond)
		}
		return true
	}
	if !claim(id, "n7", "A", time.Minute) {
		t.Fatal("a first claim was refused")
	}
	if claim(id, "n7", "A", time.Minute) || claim(id, "n7", "B", time.Minute) {
		t.Error("a second claim of the same request was made")
	}
	for _, other := range [][2]string{{id, "s7"}, {id + "x", "n7"}, {id, "n70"}} {
		if !claim(other[0], other[1], "B", time.Minute) {
			t.Errorf("claiming %q in %q, held apart from n7 in %q, was refused", other[1], other[0], id)
		}
		release(other[0], other[1], "B")
	}
	if b, err := s.LoadSession(ctx, id); err != nil || b != nil {
		t.Errorf("a claim reads as the session's record: %q %v", b, err)
	}
	release(id, "n7", "B")
	if claim(id, "n7", "C", time.Minute) {
		t.Error("a claim released by another owner than its own was gone")
	}
	if renew(id, "n7", "B", time.Minute) {
		t.Error("another owner renewed a claim")
	}
	if !renew(id, "n7", "A", time.Minute) {
		t.Error("the owner of a claim could not renew it")
	}
	release(id, "n7", "A")
	release(id, "n7", "A")
	if renew(id, "n7", "A", time.Minute) {
		t.Error("a claim released was renewed")
	}
	if !claim(id, "n7", "B", time.Minute) {
		t.Error("a claim released by its owner could not be made again")
	}
	release(id, "n7", "B")
	long := "h" + strings.Repeat("0123456789abcdef", 4)
	owner := strings.Repeat("O", 26) + "." + strings.Repeat("z", 37)
	if !claim(id, long, owner, time.Minute) || claim(id, long, "B", time.Minute) || !renew(id, long, owner, time.Minute) {
		t.Errorf("a claim of a %d-byte request key by a %d-byte owner", len(long), len(owner))
	}
	release(id, long, owner)
	if !claim(id, long, "B", time.Minute) {
		t.Errorf("a claim of a %d-byte request key released by its %d-byte owner is still there", len(long), len(owner))
	}
	release(id, long, "B")

	// A claim expires after its TTL; its owner renews it past its TTL.
	const ttl = time.Second
	if !claim(id, "ttl", "A", ttl) {
		t.Fatal("a claim with a short TTL was refused")
	}
	time.Sleep(ttl / 2)
	if !renew(id, "ttl", "A", ttl) {
		t.Error("a claim renewed within its TTL by its owner was not renewed")
	}
	time.Sleep(ttl * 7 / 10) // past its first TTL
	if claim(id, "ttl", "B", ttl) {
		t.Error("a claim renewed by its owner expired with its first TTL")
	}
	if !expired("ttl", "B", ttl) {
		t.Error("a claim past its TTL still held")
	}
	// A claim never made, and one expired, are not renewed.
	release(id, "ttl", "B")
	if renew(id, "ttl", "A", time.Minute) {
		t.Error("a claim never made was renewed")
	}
	if !claim(id, "ttl", "A", 200*time.Millisecond) {
		t.Fatal("a claim released was refused")
	}
	time.Sleep(300 * time.Millisecond) // past its TTL
	if renew(id, "ttl", "A", time.Minute) {
		t.Error("a claim past its TTL was renewed by its owner")
	}
	// Another owner claims it again; A's release and renewal leave B's
	// claim.
	if !expired("ttl", "B", time.Minute) {
		t.Fatal("a claim past its TTL still held")
	}
	release(id, "ttl", "A")
	if renew(id, "ttl", "A", time.Minute) {
		t.Error("the owner of an expired claim renewed another owner's claim made since")
	}
	if claim(id, "ttl", "C", time.Minute) {
		t.Error("the owner of an expired claim released another owner's claim made since")
	}
	if !renew(id, "ttl", "B", time.Minute) {
		t.Error("the owner of a claim made over an expired one could not renew it")
	}
	release(id, "ttl", "B")

	var wins atomic.Int32
	var winner atomic.Value
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			ok, err := s.ClaimRequest(ctx, id, "race", fmt.Sprintf("R%d", i), time.Minute)
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins.Add(1)
				winner.Store(fmt.Sprintf("R%d", i))
			}
		})
	}
	wg.Wait()
	if n := wins.Load(); n != 1 {
		t.Fatalf("%d of 32 racers claimed one request, want 1", n)
	}
	w := winner.Load().(string)
	for i := range 32 {
		if o := fmt.Sprintf("R%d", i); o != w {
			release(id, "race", o)
		}
	}
	if claim(id, "race", "C", time.Minute) {
		t.Error("the racers that lost released the winner's claim")
	}
	release(id, "race", w)
}

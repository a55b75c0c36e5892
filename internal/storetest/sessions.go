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
	ClaimRequest(ctx context.Context, session, request string, ttl time.Duration) (bool, error)
	ReleaseRequest(ctx context.Context, session, request string) error
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
// (a second one is refused), a release lets it be made again (and
// releasing one not there is no error), a claim expires after its TTL,
// claims are kept apart by session and by request (and from the records
// of sessions), a long request key is taken, and of 32 racers claiming
// one request exactly one wins.
func checkClaims(t *testing.T, s SessionStore, id string) {
	ctx := context.Background()
	claim := func(session, request string, ttl time.Duration) bool {
		t.Helper()
		ok, err := s.ClaimRequest(ctx, session, request, ttl)
		if err != nil {
			t.Fatalf("ClaimRequest(%q, %q): %v", session, request, err)
		}
		return ok
	}
	release := func(session, request string) {
		t.Helper()
		if err := s.ReleaseRequest(ctx, session, request); err != nil {
			t.Fatalf("ReleaseRequest(%q, %q): %v", session, request, err)
		}
	}
	if !claim(id, "n7", time.Minute) {
		t.Fatal("a first claim was refused")
	}
	if claim(id, "n7", time.Minute) {
		t.Error("a second claim of the same request was made")
	}
	for _, other := range [][2]string{{id, "s7"}, {id + "x", "n7"}, {id, "n70"}} {
		if !claim(other[0], other[1], time.Minute) {
			t.Errorf("claiming %q in %q, held apart from n7 in %q, was refused", other[1], other[0], id)
		}
		release(other[0], other[1])
	}
	if b, err := s.LoadSession(ctx, id); err != nil || b != nil {
		t.Errorf("a claim reads as the session's record: %q %v", b, err)
	}
	release(id, "n7")
	release(id, "n7")
	if !claim(id, "n7", time.Minute) {
		t.Error("a claim released could not be made again")
	}
	release(id, "n7")
	long := "h" + strings.Repeat("0123456789abcdef", 4)
	if !claim(id, long, time.Minute) || claim(id, long, time.Minute) {
		t.Errorf("a claim of a %d-byte request key", len(long))
	}
	release(id, long)

	if !claim(id, "ttl", 300*time.Millisecond) {
		t.Fatal("a claim with a short TTL was refused")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !claim(id, "ttl", 300*time.Millisecond) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if time.Now().After(deadline) {
		t.Error("a claim past its TTL still held")
	}
	release(id, "ttl")

	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			ok, err := s.ClaimRequest(ctx, id, "race", time.Minute)
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if n := wins.Load(); n != 1 {
		t.Errorf("%d of 32 racers claimed one request, want 1", n)
	}
	release(id, "race")
}

// Package storetest checks what every store module must do alike, for the
// store modules' tests (pgstore, redisstore): each runs the same checks
// against its own store on a real database. It imports the standard
// library only.
package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// LimitStore is what the gateway and its resource server use of a store
// module's limit store.
type LimitStore interface {
	Take(ctx context.Context, key string, interval time.Duration, burst int) (bool, time.Duration, error)
	Acquire(ctx context.Context, key, lease string, max int, ttl time.Duration) (bool, time.Duration, error)
	Renew(ctx context.Context, key, lease string, ttl time.Duration) (bool, error)
	Release(ctx context.Context, key, lease string) error
	Once(ctx context.Context, bucket, id string, ttl time.Duration, maxLive int) (fresh, full bool, err error)
}

// CheckLimitStore checks s: a rate limit lets its burst through, also when 40
// callers race for it, and says when to retry; a cap gives out exactly its
// slots to racing callers, takes one back on Release, and takes back a
// lease not renewed once its TTL is over (Renew of it then says so); an
// id is fresh once, a full bucket says so.
func CheckLimitStore(t *testing.T, s LimitStore) {
	ctx := context.Background()
	race := func(n int, fn func(i int) bool) int {
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := 0
		for i := range n {
			wg.Go(func() {
				if fn(i) {
					mu.Lock()
					won++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return won
	}
	if won := race(40, func(int) bool {
		ok, _, err := s.Take(ctx, "rate a", time.Hour, 10)
		if err != nil {
			t.Error(err)
		}
		return ok
	}); won != 10 {
		t.Errorf("40 racing for a burst of 10: %d won", won)
	}
	ok, retry, err := s.Take(ctx, "rate a", time.Hour, 10)
	if ok || err != nil || retry <= 0 || retry > time.Hour {
		t.Errorf("over the rate: %v %v %v; want a retry within the interval", ok, retry, err)
	}
	if ok, _, err := s.Take(ctx, "rate b", time.Hour, 10); !ok || err != nil {
		t.Errorf("another key: %v %v", ok, err)
	}

	if won := race(20, func(i int) bool {
		ok, _, err := s.Acquire(ctx, "cap a", fmt.Sprint("lease", i), 5, time.Minute)
		if err != nil {
			t.Error(err)
		}
		return ok
	}); won != 5 {
		t.Errorf("20 racing for 5 slots: %d won", won)
	}
	var holder string
	for i := range 20 {
		if ok, _ := s.Renew(ctx, "cap a", fmt.Sprint("lease", i), time.Minute); ok {
			holder = fmt.Sprint("lease", i)
			break
		}
	}
	if ok, retry, err := s.Acquire(ctx, "cap a", "late", 5, time.Minute); ok || err != nil || retry <= 0 || retry > time.Minute {
		t.Errorf("a sixth: %v %v %v; want refused with a retry within the TTL", ok, retry, err)
	}
	if err := s.Release(ctx, "cap a", holder); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Renew(ctx, "cap a", holder, time.Minute); ok {
		t.Error("a released lease was renewed")
	}
	if ok, _, err := s.Acquire(ctx, "cap a", "late", 5, time.Minute); !ok || err != nil {
		t.Errorf("after a release: %v %v", ok, err)
	}

	// A holder that stops renewing: its slot comes back after its TTL.
	const ttl = 300 * time.Millisecond
	if ok, _, err := s.Acquire(ctx, "cap b", "dead", 1, ttl); !ok || err != nil {
		t.Fatal(ok, err)
	}
	came := false
	for range 200 {
		ok, retry, err := s.Acquire(ctx, "cap b", "alive", 1, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			came = true
			break
		}
		if retry > ttl {
			t.Fatalf("retry after %v, past the dead lease's TTL %v", retry, ttl)
		}
		time.Sleep(retry)
	}
	if !came {
		t.Fatal("the slot of a lease never renewed did not come back")
	}
	if ok, _ := s.Renew(ctx, "cap b", "dead", time.Minute); ok {
		t.Error("a lapsed lease was renewed")
	}

	for i, want := range [][2]bool{{true, false}, {false, false}} {
		if fresh, full, err := s.Once(ctx, "bucket a", "id1", time.Minute, 2); err != nil || fresh != want[0] || full != want[1] {
			t.Errorf("Once %d of id1: fresh %v full %v %v", i+1, fresh, full, err)
		}
	}
	if fresh, full, _ := s.Once(ctx, "bucket a", "id2", time.Minute, 2); !fresh || full {
		t.Errorf("id2: fresh %v full %v", fresh, full)
	}
	if fresh, full, _ := s.Once(ctx, "bucket a", "id3", time.Minute, 2); fresh || !full {
		t.Errorf("id3 into a full bucket: fresh %v full %v", fresh, full)
	}
	if fresh, full, _ := s.Once(ctx, "bucket a", "id1", time.Minute, 2); fresh || full {
		t.Errorf("id1 again into a full bucket: fresh %v full %v; want a replay", fresh, full)
	}
	if fresh, _, _ := s.Once(ctx, "bucket b", "id3", time.Minute, 2); !fresh {
		t.Error("another bucket is full too")
	}
	if won := race(10, func(int) bool {
		fresh, _, err := s.Once(ctx, "bucket c", "same", time.Minute, 100)
		if err != nil {
			t.Error(err)
		}
		return fresh
	}); won != 1 {
		t.Errorf("one id recorded by 10 racing callers: fresh %d times", won)
	}
}

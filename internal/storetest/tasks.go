package storetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TaskStore is what the gateway uses of a store module's task store.
type TaskStore interface {
	LoadTask(ctx context.Context, key string) ([]byte, error)
	SaveTask(ctx context.Context, key string, rec []byte, ttl time.Duration) error
	AddTask(ctx context.Context, key string, rec []byte, ttl time.Duration) (bool, error)
	ReplaceTask(ctx context.Context, key string, old, rec []byte, ttl time.Duration) (bool, error)
	DeleteTask(ctx context.Context, key string) error
}

// asSessions is a TaskStore seen as a session store's records, for
// checkRecords.
type asSessions struct{ s TaskStore }

func (a asSessions) LoadSession(ctx context.Context, id string) ([]byte, error) {
	return a.s.LoadTask(ctx, id)
}

func (a asSessions) SaveSession(ctx context.Context, id string, rec []byte, ttl time.Duration) error {
	return a.s.SaveTask(ctx, id, rec, ttl)
}

func (a asSessions) ReplaceSession(ctx context.Context, id string, old, rec []byte, ttl time.Duration) (bool, error) {
	return a.s.ReplaceTask(ctx, id, old, rec, ttl)
}

func (a asSessions) DeleteSession(ctx context.Context, id string) error {
	return a.s.DeleteTask(ctx, id)
}

// CheckTaskStore checks s as CheckSessionStore checks a session store
// (load, save, replace, delete, expiry, racing writers), with keys of the
// gateway's forms, and AddTask: it writes only where there is no record
// (none saved, deleted or expired), and of 32 adders racing on one key
// exactly one succeeds.
func CheckTaskStore(t *testing.T, s TaskStore) {
	checkRecords(t, asSessions{s})
	ctx := context.Background()
	key := fmt.Sprintf("task.srv_1-a.%d", time.Now().UnixNano())
	add := func(key, rec string, ttl time.Duration) bool {
		t.Helper()
		ok, err := s.AddTask(ctx, key, []byte(rec), ttl)
		if err != nil {
			t.Fatalf("AddTask(%q): %v", key, err)
		}
		return ok
	}
	load := func(key string) string {
		t.Helper()
		b, err := s.LoadTask(ctx, key)
		if err != nil {
			t.Fatalf("LoadTask(%q): %v", key, err)
		}
		return string(b)
	}
	if !add(key, "a", time.Minute) || load(key) != "a" {
		t.Fatalf("adding a new record: %q", load(key))
	}
	if add(key, "b", time.Minute) || load(key) != "a" {
		t.Errorf("a record was added over another one: %q", load(key))
	}
	if err := s.DeleteTask(ctx, key); err != nil {
		t.Fatal(err)
	}
	if !add(key, "c", 200*time.Millisecond) || load(key) != "c" {
		t.Errorf("adding where a record was deleted: %q", load(key))
	}
	deadline := time.Now().Add(5 * time.Second)
	for load(key) != "" && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !add(key, "d", time.Minute) || load(key) != "d" {
		t.Errorf("adding where a record expired: %q", load(key))
	}
	_ = s.DeleteTask(ctx, key)

	race := key + "-race"
	var wg sync.WaitGroup
	var won atomic.Int32
	for i := range 32 {
		wg.Go(func() {
			ok, err := s.AddTask(ctx, race, []byte{byte('a' + i%26)}, time.Minute)
			if err != nil {
				t.Error(err)
			}
			if ok {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if n := won.Load(); n != 1 {
		t.Errorf("%d of 32 racing adders succeeded, want 1", n)
	}
	_ = s.DeleteTask(ctx, race)
}

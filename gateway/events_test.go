package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEventStoreAnswersAsGoSDKs: the gateway's event store answers as
// go-sdk's MemoryEventStore does, op for op, over random opens, appends
// (equal events among them), replays, closes and purges (a bound of a
// few events), events held once or copied.
func TestEventStoreAnswersAsGoSDKs(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 7))
		ours := newEventStore()
		theirs := mcp.NewMemoryEventStore(nil)
		maxBytes := 1 + r.IntN(200)
		ours.maxBytes = maxBytes
		ours.internMin = r.IntN(40) // events of up to 40 bytes: some held once, some copied
		theirs.SetMaxBytes(maxBytes)
		for op := range 2000 {
			session := fmt.Sprintf("s%d", r.IntN(4))
			stream := fmt.Sprintf("t%d", r.IntN(4))
			switch r.IntN(10) {
			case 0:
				if err := ours.Open(ctx, session, stream); err != nil {
					t.Fatal(err)
				}
				_ = theirs.Open(ctx, session, stream)
			case 1, 2, 3, 4:
				data := bytes.Repeat([]byte{byte('a' + r.IntN(3))}, r.IntN(40))
				if err := ours.Append(ctx, session, stream, data); err != nil {
					t.Fatal(err)
				}
				_ = theirs.Append(ctx, session, stream, data)
			case 5:
				if err := ours.SessionClosed(ctx, session); err != nil {
					t.Fatal(err)
				}
				_ = theirs.SessionClosed(ctx, session)
			default:
				index := r.IntN(12) - 1
				got, gotErr := replay(ours, session, stream, index)
				want, wantErr := replay(theirs, session, stream, index)
				if (gotErr == nil) != (wantErr == nil) || errors.Is(gotErr, mcp.ErrEventsPurged) != errors.Is(wantErr, mcp.ErrEventsPurged) {
					t.Fatalf("seed %d, op %d: After(%s, %s, %d): error %v, go-sdk's %v", seed, op, session, stream, index, gotErr, wantErr)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("seed %d, op %d: After(%s, %s, %d) = %q, go-sdk's %q", seed, op, session, stream, index, got, want)
				}
			}
		}
		// Four streams a session, under the bound of the streams kept
		// (maxStreams, a difference tested by TestEventStoreBoundsStreams):
		// none was dropped.
		for id, ss := range ours.sessions {
			if ss.dropped {
				t.Fatalf("seed %d: session %s dropped a stream", seed, id)
			}
		}
	}
}

// replay returns what After yields.
func replay(s mcp.EventStore, session, stream string, index int) ([]string, error) {
	var out []string
	for data, err := range s.After(context.Background(), session, stream, index) {
		if err != nil {
			return out, err
		}
		out = append(out, string(data))
	}
	return out, nil
}

// TestEventStoreHoldsEqualEventsOnce: the same event appended to the
// streams of a thousand sessions is held once, and each replay gives its
// bytes.
func TestEventStoreHoldsEqualEventsOnce(t *testing.T) {
	ctx := context.Background()
	const sessions, size = 1000, 8 << 10
	s := newEventStore()
	event := func() []byte { return bytes.Repeat([]byte("tools/list "), size/11) }
	before := liveHeap()
	for i := range sessions {
		id := fmt.Sprintf("session-%d", i)
		if err := s.Open(ctx, id, ""); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(ctx, id, "list", event()); err != nil {
			t.Fatal(err)
		}
	}
	held := liveHeap() - before
	runtime.KeepAlive(s)
	if held > sessions*size/8 {
		t.Errorf("%d sessions holding the same %d-byte event take %d bytes of heap, want at most %d", sessions, size, held, sessions*size/8)
	}
	got, err := replay(s, "session-7", "list", -1)
	if err != nil || len(got) != 1 || got[0] != string(event()) {
		t.Fatalf("replay: %d events, %v", len(got), err)
	}
}

// TestEventStoreFloodHeap: a hostile server floods every session with
// small notifications, each event different (a counter in it), three
// times the store's bound over: the heap the store holds stays within
// three times its bound for every event size, as go-sdk's
// MemoryEventStore's does (about twice its bound for 40-byte events).
func TestEventStoreFloodHeap(t *testing.T) {
	const maxBytes = 4 << 20
	for _, size := range []int{40, 90, 260, 400, 600, 2000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			// The heap the store frees once dropped, the least of three
			// floods: another goroutine of the process allocating
			// meanwhile can add to one measure, not take from all three.
			held := int64(math.MaxInt64)
			for range 3 {
				held = min(held, floodedHeap(maxBytes, size))
				if held <= 3*maxBytes {
					break
				}
			}
			t.Logf("%d-byte events: %.1f MiB of heap for a bound of %d MiB", size, float64(held)/(1<<20), maxBytes>>20)
			if held > 3*maxBytes {
				t.Errorf("%d-byte events: the store holds %.1f MiB of heap, want at most %d MiB (3 times its bound)", size, float64(held)/(1<<20), 3*maxBytes>>20)
			}
		})
	}
}

// floodedHeap floods a store bounded to maxBytes with size-byte events,
// each different, three times its bound over, spread over 100 sessions,
// and returns the heap it frees once dropped.
func floodedHeap(maxBytes, size int) int64 {
	ctx := context.Background()
	s := newEventStore()
	s.maxBytes = maxBytes
	pad := bytes.Repeat([]byte("x"), size)
	for i := range 3 * maxBytes / size {
		data := fmt.Appendf(nil, `{"n":%d,"method":"notifications/message","p":"%s`, i, pad)[:size]
		if err := s.Append(ctx, fmt.Sprint("session-", i%100), "stream", data); err != nil {
			panic(err) // a store with room never refuses
		}
	}
	with := settledHeap()
	runtime.KeepAlive(s)
	return with - settledHeap()
}

// settledHeap returns the live heap once the values unique.Make held for
// handles no longer reachable are gone (the unique package drops them
// after a collection, on a goroutine of its own): once a collection
// frees less than 1% of it.
func settledHeap() int64 {
	h := liveHeap()
	for range 50 {
		time.Sleep(20 * time.Millisecond)
		next := liveHeap()
		if next >= h-h/100 {
			return next
		}
		h = next
	}
	return h
}

// TestEventStoreBoundsStreams: the store keeps at most maxStreams streams
// of a session besides its standalone one, dropping the one longest
// without an open or an append; an event of a stream dropped is refused
// and a resumption of it fails, while the streams kept, the standalone
// one and the other sessions' answer as before.
func TestEventStoreBoundsStreams(t *testing.T) {
	ctx := context.Background()
	s := newEventStore()
	s.maxStreams = 3
	for _, id := range []string{"", "a", "b", "c"} {
		if err := s.Open(ctx, "s1", id); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(ctx, "s1", id, []byte("event of "+id)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Open(ctx, "s2", "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, "s1", "a", []byte("more of a")); err != nil { // b is now the least used
		t.Fatal(err)
	}
	if dropped := s.open(ctx, "s1", "d"); dropped != "b" {
		t.Fatalf("opening a 4th stream dropped %q, want b", dropped)
	}
	if err := s.Append(ctx, "s1", "b", []byte("late")); !errors.Is(err, errStreamDropped) {
		t.Errorf("an event of the dropped stream: %v, want it refused", err)
	}
	if _, err := replay(s, "s1", "b", -1); err == nil {
		t.Error("a resumption of the dropped stream did not fail")
	}
	for id, want := range map[string]string{"": "[event of ]", "a": "[event of a more of a]", "c": "[event of c]", "d": "[]"} {
		if got, err := replay(s, "s1", id, -1); err != nil || fmt.Sprint(got) != want {
			t.Errorf("stream %q: %q %v, want %s", id, got, err, want)
		}
	}
	for i := range 1000 {
		if err := s.Open(ctx, "s1", fmt.Sprint("x", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(s.sessions["s1"].streams); n != 4 {
		t.Errorf("after 1000 more streams the session holds %d streams, want 4 (3 and the standalone one)", n)
	}
	if got, err := replay(s, "s1", "", -1); err != nil || fmt.Sprint(got) != "[event of ]" {
		t.Errorf("the standalone stream after 1000 more: %q %v", got, err)
	}
	if s.nBytes != len("event of ") {
		t.Errorf("the store counts %d bytes held, want %d", s.nBytes, len("event of "))
	}
	if err := s.Append(ctx, "s2", "new", []byte("x")); err != nil {
		t.Errorf("an event of a new stream of a session that dropped none: %v", err)
	}
}

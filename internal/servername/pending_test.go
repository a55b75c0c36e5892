package servername

import (
	"bytes"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestPendingHoldsUntilSettled: records logged before the name is known
// are written once it is, in order, under it (a "server" attribute of
// the record is replaced); past MaxHeld records the rest are dropped and
// counted in one note; the first Settle chooses, later ones do not.
func TestPendingHoldsUntilSettled(t *testing.T) {
	var out bytes.Buffer
	p := NewPending("fallback")
	log := slog.New(p.Handler(slog.NewTextHandler(&out, nil)))
	for i := range MaxHeld + 500 {
		log.Info("held", "i", i, "server", "")
	}
	if out.Len() != 0 {
		t.Fatalf("written before the name was known: %.300s", out.String())
	}
	if got := p.Settle("srv"); got != "srv" {
		t.Fatalf("Settle: %q", got)
	}
	if got := p.Settle("other"); got != "srv" || p.Name() != "srv" || p.Peek() != "srv" {
		t.Fatalf("a second Settle chose %q", got)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != MaxHeld+1 {
		t.Fatalf("%d lines, want %d held and a note", len(lines), MaxHeld)
	}
	for i, l := range lines[:MaxHeld] {
		if !strings.Contains(l, " server=srv i="+strconv.Itoa(i)) || strings.Count(l, "server=") != 1 {
			t.Fatalf("line %d: %s", i, l)
		}
	}
	if note := lines[MaxHeld]; !strings.Contains(note, "server=srv dropped=500") {
		t.Errorf("the note: %s", note)
	}
	out.Reset()
	log.Info("after")
	if !strings.Contains(out.String(), "server=srv") {
		t.Errorf("after Settle: %s", out.String())
	}
}

// TestPendingConcurrent: callbacks queued from many goroutines while
// Settle runs the held ones each run exactly once, after the name is
// settled (under -race).
func TestPendingConcurrent(t *testing.T) {
	p := NewPending("fallback")
	var mu sync.Mutex
	ran := map[int]string{}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				id := g*100 + i
				p.Do(1, func(name string) {
					mu.Lock()
					defer mu.Unlock()
					if _, twice := ran[id]; twice {
						t.Errorf("callback %d ran twice", id)
					}
					ran[id] = name
				})
			}
		})
	}
	wg.Go(func() { p.Settle("srv") })
	wg.Wait()
	if len(ran) != 800 {
		t.Fatalf("%d callbacks ran, want 800", len(ran))
	}
	for id, name := range ran {
		if name != "srv" {
			t.Fatalf("callback %d saw %q", id, name)
		}
	}
}

package park

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"
)

func describe(r string, err error) string {
	if err != nil {
		return "failed: " + err.Error()
	}
	return "completed: " + r
}

// TestTakeOnce: a question takes one answer; the second claim gets the
// first one's record, with what the call did after it.
func TestTakeOnce(t *testing.T) {
	tb := New[string](0, slog.New(slog.DiscardHandler), describe)
	if _, ok := tb.Take("alice", "q1", "srv", "tool", 1, "accept"); !ok {
		t.Fatal("first claim refused")
	}
	tb.Settle("alice", "q1", "", errors.New("boom"))
	rec, ok := tb.Take("alice", "q1", "srv", "tool", 1, "decline")
	if ok || rec.Action != "accept" || rec.Now != "failed: boom" {
		t.Fatalf("second claim: ok=%v %+v", ok, rec)
	}
	// Another principal's question of the same ID is its own.
	if _, ok := tb.Take("bob", "q1", "srv", "tool", 1, "accept"); !ok {
		t.Fatal("another principal's claim refused")
	}
	if _, ok := tb.Recorded("carol", "q1"); ok {
		t.Fatal("a record read by another principal")
	}
}

// TestBookForgetsOldest: past MaxAnswered questions the oldest record is
// forgotten, the newest kept.
func TestBookForgetsOldest(t *testing.T) {
	var b Book[string]
	for i := range MaxAnswered + 1 {
		b.add("p", fmt.Sprint(i), &Record[string]{Round: i})
	}
	if b.get("p", "0") != nil {
		t.Fatal("the oldest record was kept")
	}
	if r := b.get("p", fmt.Sprint(MaxAnswered)); r == nil || r.Round != MaxAnswered {
		t.Fatalf("the newest record: %+v", r)
	}
	if len(b.order) != MaxAnswered || len(b.byID) != MaxAnswered {
		t.Fatalf("%d keys, %d records", len(b.order), len(b.byID))
	}
}

// TestRecordedResultOnce: the result a record carries is returned once.
func TestRecordedResultOnce(t *testing.T) {
	tb := New[string](0, slog.New(slog.DiscardHandler), describe)
	tb.book.add("p", "q", &Record[string]{Result: "done", HasResult: true})
	if rec, _ := tb.Recorded("p", "q"); !rec.HasResult || rec.Result != "done" {
		t.Fatalf("first read: %+v", rec)
	}
	if rec, ok := tb.Recorded("p", "q"); !ok || rec.HasResult {
		t.Fatalf("second read: %v %+v", ok, rec)
	}
}

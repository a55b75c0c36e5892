package order

import (
	"context"
	"testing"
)

// TestSpots: a notification's place comes before the place after an
// answer read after it, and not before one of another connection; a
// place is passed once its markers were reached by the middleware (not
// when Wait gave up on them) or its connection ended; a Span carried by a
// context records the places it is given.
func TestSpots(t *testing.T) {
	m := New()
	before := m.Handling() // a notification read before the answer
	tok := token(t, m, m.Issue())
	answered := m.Here()
	if !before.Before(answered) || answered.Passed() {
		t.Fatalf("place %v before answer %v: Before %v, answer passed %v", before, answered, before.Before(answered), answered.Passed())
	}
	if before.Before(New().Here()) || (Spot{}).Before(answered) {
		t.Error("a place came before one of another connection")
	}
	if !before.Apart(New().Here()) || before.Apart(answered) || before.Apart(Spot{}) {
		t.Error("Apart wrong")
	}
	m.Issue()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m.Wait(ctx, nil)
	m.giveUp(m.issued.Load())
	if answered.Passed() {
		t.Error("a place passed when Wait gave up on its marker")
	}
	m.Reached(tok)
	if !answered.Passed() || m.Handling().Before(answered) {
		t.Error("a place not passed after its marker was reached")
	}
	later := m.Here()
	m.End()
	if !later.Passed() {
		t.Error("a place of an ended connection not passed")
	}

	sp := new(Span)
	ctx = WithSpan(context.Background(), sp)
	if SpanFrom(ctx) != sp || SpanFrom(context.Background()) != nil {
		t.Fatal("SpanFrom did not return the context's Span")
	}
	n := New()
	SpanFrom(ctx).Sent(n)
	n.Issue()
	SpanFrom(ctx).Answered(n)
	sent, ans := sp.Places()
	if !sent.Before(ans) || HandlingFrom(WithMarks(context.Background(), n)) != n.Handling() || HandlingFrom(ctx) != (Spot{}) {
		t.Errorf("span %v %v; HandlingFrom wrong", sent, ans)
	}
	var none *Span
	none.Sent(n)
	none.Answered(n)
	if s, a := none.Places(); s != (Spot{}) || a != (Spot{}) {
		t.Error("a nil Span recorded places")
	}
}

// TestSpotsSentInOrder: on a connection whose reader passes up the
// markers asked for (InOrder), a notification read before a request was
// sent, after the last marker, comes before the request's place, and one
// read after it does not; elsewhere the request's place is Here, and no
// marker is asked for.
func TestSpotsSentInOrder(t *testing.T) {
	m := New()
	m.InOrder()
	m.Reached(token(t, m, m.Issue()))
	read := m.Handling() // read after marker 1, before the request was sent
	sp := new(Span)
	sp.Sent(m)
	sent, _ := sp.Places()
	if !read.Before(sent) {
		t.Errorf("a notification read before the request was sent does not come before it (%v, %v)", read, sent)
	}
	b := m.Boundary()
	if b == nil || m.Boundary() != nil {
		t.Fatalf("Boundary %v: want one marker, once", b)
	}
	m.Reached(token(t, m, b))
	if m.Handling().Before(sent) {
		t.Error("a notification read after the request's marker comes before the request")
	}

	n := New()
	n.Reached(token(t, n, n.Issue()))
	sp.Sent(n)
	if sent, _ := sp.Places(); sent != n.Here() || n.Boundary() != nil {
		t.Errorf("on a connection not InOrder: place %v, want %v, and no marker", sent, n.Here())
	}
}

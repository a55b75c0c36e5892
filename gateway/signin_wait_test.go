package gateway

import (
	"strconv"
	"testing"
	"time"
)

// TestSignInWaitsBounded: one principal's flood of sign-in questions
// fills its own share of the record, not the others'; an expired
// question makes room; a completed sign-in takes out its principal's
// questions at its server only, and wakes the calls waiting for them.
func TestSignInWaitsBounded(t *testing.T) {
	var s signInWaits
	later := time.Now().Add(time.Minute)
	for i := range maxSignInWaitsPerPrincipal {
		if !s.add(&signInWait{id: "m" + strconv.Itoa(i), principal: "mallory", server: "up", expires: later}) {
			t.Fatalf("mallory's question %d was not recorded", i)
		}
	}
	if s.add(&signInWait{id: "m-over", principal: "mallory", server: "up", expires: later}) {
		t.Fatal("mallory's questions past her share were recorded")
	}
	waiting := &signInWait{id: "a1", principal: "alice", server: "up", expires: later, inCall: true, done: make(chan struct{})}
	if !s.add(waiting) || !s.add(&signInWait{id: "a2", principal: "alice", server: "other", expires: later}) {
		t.Fatal("mallory's flood took alice's room")
	}
	s.mu.Lock()
	s.m["m0"].expires = time.Now().Add(-time.Second)
	s.mu.Unlock()
	if !s.add(&signInWait{id: "m-next", principal: "mallory", server: "up", expires: later}) {
		t.Fatal("an expired question of mallory's made no room")
	}
	got := s.completed("alice", "up")
	if len(got) != 1 || got[0] != waiting {
		t.Fatalf("alice's sign-in to up took out %d questions", len(got))
	}
	select {
	case <-waiting.done:
	default:
		t.Fatal("the call waiting for alice's sign-in was not woken")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m["a2"] == nil || s.per["alice"] != 1 || s.per["mallory"] != maxSignInWaitsPerPrincipal {
		t.Fatalf("left: alice's other question %v, counts %v", s.m["a2"] != nil, s.per)
	}
}

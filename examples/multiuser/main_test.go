package main

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// TestRecipe runs the recipe: two users on two replicas of one service get
// their own notes, a pending call saved by one replica is resumed by the
// other for its user and refused by the adapter to another user, and the note lands with
// the user who answered.
func TestRecipe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	want := `replica 1, alice: alice's notes: call the bank
replica 1, bob: bob's notes: water the plants
replica 2, alice: alice's notes: call the bank
replica 2, bob: bob's notes: water the plants
replica 1, alice is asked: What should the note say?
replica 2, bob resumes alice's call: mcpadapter: server "notes", tool "add_note": resume refused (principal): the call was made for principal "alice", the resume's context is for "bob"
replica 2, alice answers: note added for alice
replica 1, alice: alice's notes: call the bank; Buy bread
`
	if out.String() != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", out.String(), want)
	}
}

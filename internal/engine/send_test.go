package engine

import (
	"fmt"
	"io"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/sdkerr"
	"github.com/mcpadapter/mcpadapter/internal/stdio"
)

// A write that failed is a request never sent, and may be sent again;
// the same error from a call the fast path handed over to go-sdk (over
// stdio, after the server answered its first round) is not: the server
// has the call.
func TestNeverSentHandedOver(t *testing.T) {
	write := fmt.Errorf("calling %q: %w", "tools/call", &stdio.WriteError{Err: io.ErrClosedPipe})
	if !neverSent(write, false) {
		t.Errorf("%v: not taken for a request never sent", write)
	}
	if neverSent(&sdkerr.DeliveredError{Err: write}, false) {
		t.Errorf("%v, from a handed-over call: taken for a request never sent", write)
	}
}

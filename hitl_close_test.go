package mcpadapter_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/hitltest"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestCloseCancelsParkedQuestions: closing an Adapter while a
// handshake-era server waits for the user's answer tells that server
// "cancel" before the connection goes, so the server's call ends as the
// protocol says instead of waiting on a connection nobody answers.
func TestCloseCancelsParkedQuestions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		target func(t *testing.T, srv *hitltest.Server) any
	}{
		{"http", func(t *testing.T, srv *hitltest.Server) any {
			url, _ := serveBodies(t, srv, testserver.Legacy)
			return url
		}},
		{"in-process", func(t *testing.T, srv *hitltest.Server) any { return srv.Server }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			srv := hitltest.NewServer(testserver.Legacy)
			a, err := mcpadapter.New(tc.target(t, srv), &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			ask := toolMap(t, ctx, a)["ask"]
			res, err := ask.Call(ctx, json.RawMessage(askArgs("closing", 1)))
			mustInterrupt(t, res, err)
			if err := a.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			// The server got "cancel" and its call ended: Close returned
			// after it, or the server finishes within a bounded wait.
			deadline := time.Now().Add(10 * time.Second)
			for srv.Finished("closing") == "" && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if got := srv.Finished("closing"); got != "closing cancelled at q1" {
				t.Errorf("the server's call ended as %q; received %v", got, srv.Received())
			}
		})
	}
}

package main

import (
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestHeaderAndTimeoutFlags: --header reaches the server (and a refused
// value is never printed), --timeout bounds a call and says so, and
// --timeout-resets-on-progress with --max-total-timeout fit a long call
// that reports progress.
func TestHeaderAndTimeoutFlags(t *testing.T) {
	url := testserver.ServeStreamable(t, testserver.New(testserver.Options{}), testserver.Stateless(), testserver.PropagateCancellation())
	cli(t, "", "call", "--target", url, "--header", testserver.PrincipalHeader+": alice", "whoami").Must(t, 0, []string{`"principal":"alice"`}, nil)
	cli(t, "", "call", "--target", url, "--timeout", "200ms", "slow", `{"ms":20000}`).Must(t, 2, nil, []string{"no answer within 200ms"})
	// 200 progress steps of 10ms: 2s, over the 1s timeout unless it restarts.
	cli(t, "", "call", "--target", url, "--timeout", "1s", "progress", `{"steps":200}`).Must(t, 2, nil, []string{"no answer within 1s"})
	cli(t, "", "call", "--target", url, "--timeout", "1s", "--timeout-resets-on-progress", "progress", `{"steps":200}`).Must(t, 0, []string{"done"}, nil)
	cli(t, "", "call", "--target", url, "--timeout", "1s", "--timeout-resets-on-progress", "--max-total-timeout", "300ms", "progress", `{"steps":200}`).
		Must(t, 2, nil, []string{"overall maximum of 300ms"})
	r := cli(t, "", "call", "--target", url, "--max-total-timeout", "later", "echo", `{"text":"x"}`)
	r.Must(t, 2, nil, []string{"--max-total-timeout"})
}

package gateway

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// a 2025-11-25 client on its tasks/result waits for the answer no longer
// than ParkTimeout: the task then has the client's question cancelled,
// and a late answer is not taken.
func TestAsksBoundTaskQuestion(t *testing.T) {
	b := startTaskBackends(t)
	const park = 500 * time.Millisecond
	_, url := taskGateway(t, b, &Options{ParkTimeout: park})
	c := newRawRPC(t, url, v1125, "alice", `{"elicitation":{}}`)
	id := c.startTask("ext_ask", `{}`)
	c.waitStatus(id, "input_required")
	start := time.Now()
	res, m := c.do(testCtx(t, 30*time.Second), "tasks/result", `{"taskId":"`+id+`"}`, func(method string, _ json.RawMessage) string {
		if method == "elicitation/create" {
			time.Sleep(4 * park) // the user is slow
		}
		return `{"action":"accept","content":{"name":"Grace"}}`
	})
	if m.Error != nil || !strings.Contains(string(res), "(cancel)") {
		t.Fatalf("tasks/result after %s: %s %+v; want the question cancelled after %s", time.Since(start), res, m.Error, park)
	}
}

// TestAsksBoundInputRequest: the question of a 2026-07-28 server's
// input_required result that the gateway puts to a handshake-era client
// waits for the answer no longer than ParkTimeout: the call then ends
// with an error that says so.
func TestAsksBoundInputRequest(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Modern}))
	const park = 500 * time.Millisecond
	_, url := oneServerGateway(t, up.URL, &Options{ParkTimeout: park})
	c := newRawRPC(t, url, v1125, "alice", `{"elicitation":{}}`)
	start := time.Now()
	res, m := c.do(testCtx(t, 30*time.Second), "tools/call", `{"name":"book","arguments":{"date":"friday"}}`, func(method string, _ json.RawMessage) string {
		if method == "elicitation/create" {
			time.Sleep(4 * park) // the user is slow
		}
		return `{"action":"accept","content":{"guests":2,"seating":"inside"}}`
	})
	if m.Error == nil && strings.Contains(string(res), "Booked") || !strings.Contains(string(res)+fmt.Sprint(m.Error), "within "+park.String()) {
		t.Fatalf("the call after %s: %s %+v; want it ended after %s", time.Since(start), res, m.Error, park)
	}
}

// oneServerGateway starts a gateway in front of the server at target,
// behind bearer tokens (the token is the principal).
func oneServerGateway(t *testing.T, target string, opts *Options) (*Gateway, string) {
	t.Helper()
	opts.Logger = quietLogger(t)
	return startForPrincipals(t, []Server{{Name: "s", Target: target}}, opts)
}

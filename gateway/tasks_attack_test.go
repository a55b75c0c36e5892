package gateway

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
)

// openTaskGateway starts a gateway in front of b with no authorization:
// every client is the same empty principal.
func openTaskGateway(t *testing.T, b *taskBackends, opts *Options) string {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	opts.Prefix, opts.Logger = mcpadapter.PrefixAlways, quietLogger(t)
	g, err := New(b.servers, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	if err := g.Start(testCtx(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// TestTasksListWithoutAuthorization: with no authorization the ids'
// random digits are what keeps one client from another's tasks, so
// tasks/list must not hand them out: another session, or a 2026-07-28
// client, lists none of a session's tasks; the session lists its own.
func TestTasksListWithoutAuthorization(t *testing.T) {
	b := startTaskBackends(t)
	url := openTaskGateway(t, b, nil)
	alice := newRawRPC(t, url, v1125, "", `{}`)
	id := alice.startTask("plain_slow", `{"ms":30000}`)
	mallory := newRawRPC(t, url, v1125, "", `{}`)
	modern := newRawRPC(t, url, v0728, "", `{}`)
	for name, c := range map[string]*rawRPC{"another session": mallory, "a 2026-07-28 client": modern} {
		if l := c.call("tasks/list", `{}`); strings.Contains(fmt.Sprint(l), id) {
			t.Errorf("%s lists alice's task: %v", name, l)
		}
	}
	if l := alice.call("tasks/list", `{}`); !strings.Contains(fmt.Sprint(l), id) {
		t.Errorf("alice's list lacks her task: %v", l)
	}
	// The id itself still reaches the task: it is the capability.
	if res := mallory.call("tasks/cancel", `{"taskId":"`+id+`"}`); res["status"] != "cancelled" {
		t.Errorf("cancel by id: %v", res)
	}
}

// TestTasksChurnIsBounded: a client that makes tasks and cancels them, or
// fetches their results, as fast as it can, does not grow what the
// gateway keeps for it past twice its cap.
func TestTasksChurnIsBounded(t *testing.T) {
	const max = 3
	b := startTaskBackends(t)
	_, url := taskGateway(t, b, &Options{Tasks: &TaskOptions{MaxPerPrincipal: max}})
	for _, v := range []string{v1125, v0728} {
		t.Run(v, func(t *testing.T) {
			c := newRawRPC(t, url, v, "mallory-"+v, `{}`)
			for i := range 6 * max {
				id := c.startTask("plain_slow", `{"ms":30000}`)
				if i%2 == 0 {
					c.call("tasks/cancel", `{"taskId":"`+id+`"}`)
					continue
				}
				c.call("tasks/cancel", `{"taskId":"`+id+`"}`)
				id = c.startTask("plain_echo", `{"text":"x"}`)
				if v == v0728 {
					c.waitStatus(id, "completed")
				} else {
					c.call("tasks/result", `{"taskId":"`+id+`"}`)
				}
			}
			if n := len(c.call("tasks/list", `{}`)["tasks"].([]any)); n > 2*max {
				t.Fatalf("the gateway keeps %d tasks for one principal whose cap is %d", n, max)
			}
		})
	}
}

package gateway

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSignInBadAnswers: a handshake-era client answers the mid-call
// question to sign in with garbage. An action that is none of accept,
// decline and cancel (unknown, empty, 200 KiB long) ends the call with an
// error naming the answer's action (cut short), not a result that repeats
// it as if the user had declined; an answer that is no object counts as a
// client that takes no question (-32042). An accept with content (which a
// URL question has none of) is an accept: once the user signed in the
// call runs, once, with the user's token. No call reaches the server
// otherwise.
func TestSignInBadAnswers(t *testing.T) {
	e := startSignInTasks(t)
	huge := strings.Repeat("x", 200<<10)
	for i, c := range []struct{ answer, want string }{
		{`{"action":"maybe"}`, `$.action "maybe"`},
		{`{}`, `$.action ""`},
		{`{"action":"` + huge + `"}`, `$.action "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"`},
		{`"garbage"`, "-32042 "},
	} {
		user := fmt.Sprintf("user%d", i)
		rc := newRawRPC(t, e.url, v1125, user, `{"elicitation":{"url":{}}}`)
		res, m := rc.do(testCtx(t, 20*time.Second), "tools/call", `{"name":"up_whoami","arguments":{}}`, func(string, json.RawMessage) string {
			return c.answer
		})
		got := string(res)
		if m.Error != nil {
			got = fmt.Sprintf("%d %s", m.Error.Code, m.Error.Message)
		}
		if !strings.Contains(got, c.want) || len(got) > 1000 || strings.Contains(got, "did not sign in") {
			if len(got) > 300 {
				got = got[:300] + "…"
			}
			t.Errorf("answer %.40s: got %s, want an error with %s", c.answer, got, c.want)
		}
		if e.calls(user) != 0 {
			t.Errorf("answer %.40s: the call reached the server", c.answer)
		}
	}

	rc := newRawRPC(t, e.url, v1125, "alice", `{"elicitation":{"url":{}}}`)
	res, m := rc.do(testCtx(t, 30*time.Second), "tools/call", `{"name":"up_whoami","arguments":{}}`, func(_ string, params json.RawMessage) string {
		var q mcp.ElicitParams
		if json.Unmarshal(params, &q) == nil && q.URL != "" {
			e.signIn(t, "alice", q.URL)
		}
		return `{"action":"accept","content":{"x":1}}`
	})
	if m.Error != nil || !strings.Contains(string(res), "Bearer ") || e.calls("alice") != 1 {
		t.Fatalf("alice's accept with content: %s %+v, %d calls", res, m.Error, e.calls("alice"))
	}
}

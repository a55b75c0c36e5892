package mcpadapter_test

//lint:file-ignore SA1019 logging lives in the handshake era, which these servers speak too

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionCallNotes is how many log messages and how many progress reports
// the notify tool sends before each answer in
// TestNotificationsBeforeSessionCallAnswerReachHandlers; sessionCalls is
// how many calls each cell makes.
const (
	sessionCallNotes = 5
	sessionCalls     = 100
)

// notesSeen counts, per call's text, the log messages and progress
// reports a Client's LogHandler and ProgressHandler have handled.
type notesSeen struct {
	mu       sync.Mutex
	logs     map[string]int
	progress map[string]int
}

// handlers returns ClientOptions whose handlers count into n.
func (n *notesSeen) handlers() *mcpadapter.ClientOptions {
	n.logs, n.progress = map[string]int{}, map[string]int{}
	// text is the call's text: the notify tool sends TEXT, a space and
	// the message's number.
	text := func(s string) string { return s[:max(0, strings.LastIndexByte(s, ' '))] }
	return &mcpadapter.ClientOptions{
		LogHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			n.mu.Lock()
			n.logs[text(fmt.Sprint(req.Params.Data))]++
			n.mu.Unlock()
		},
		ProgressHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			n.mu.Lock()
			n.progress[text(req.Params.Message)]++
			n.mu.Unlock()
		},
	}
}

// all reports whether every log message and progress report of the call
// whose text is text has been handled.
func (n *notesSeen) all(text string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.logs[text] == sessionCallNotes && n.progress[text] == sessionCallNotes
}

// TestNotificationsBeforeSessionCallAnswerReachHandlers: a tools/call made
// on go-sdk's session that Client.Session returns (as a program relaying
// requests makes it), whose tool sends several log messages and progress
// reports (the call's token) immediately before its answer, returns only
// once all of them have reached the Client's LogHandler and
// ProgressHandler, every time, over every transport and in both eras.
func TestNotificationsBeforeSessionCallAnswerReachHandlers(t *testing.T) {
	t.Parallel()
	for name, target := range notifyTargets(t) {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t)
			var seen notesSeen
			c, err := mcpadapter.NewClient(target, seen.handlers())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, modern := debugSession(ctx, t, c)
			missed := 0
			for i := range sessionCalls {
				text := fmt.Sprintf("call-%d", i)
				args, _ := json.Marshal(testserver.NotifyIn{Text: text, Log: true, Logs: sessionCallNotes, Progress: true, Progresses: sessionCallNotes})
				meta := mcp.Meta{"progressToken": text}
				if modern {
					meta[mcp.MetaKeyLogLevel] = "debug"
				}
				sess, err := c.Session(ctx)
				if err != nil {
					t.Fatal(err)
				}
				res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "notify", Arguments: json.RawMessage(args), Meta: meta})
				if err != nil || res.IsError || len(res.Content) != 1 {
					t.Fatalf("call %d: %v %+v", i, err, res)
				}
				if !seen.all(text) {
					missed++
				}
			}
			if missed > 0 {
				t.Errorf("%d of %d calls made on Client.Session's session returned before their %d log messages and %d progress reports reached the handlers",
					missed, sessionCalls, sessionCallNotes, sessionCallNotes)
			}
		})
	}
}

// startLogThenHostileCall starts a startLogThenAnswer server that
// answers tools/call with a log message, then the answer the call's tool
// names: "null" a null result, "question" a result whose question is
// null (go-sdk's decoding panics on it), "error" a JSON-RPC error,
// anything else a text result.
func startLogThenHostileCall(t *testing.T) string {
	t.Helper()
	return startLogThenAnswer(t, `{"tools":{},"logging":{}}`, func(method, tool string) (string, bool) {
		switch method {
		case "tools/list":
			return `"result":{"tools":[{"name":"null","inputSchema":{"type":"object"}},{"name":"question","inputSchema":{"type":"object"}},{"name":"error","inputSchema":{"type":"object"}},{"name":"plain","inputSchema":{"type":"object"}}]}`, false
		case "tools/call":
			switch tool {
			case "null":
				return `"result":null`, true
			case "question":
				return `"result":` + testserver.NullQuestionResult, true
			case "error":
				return `"error":{"code":-32603,"message":"no"}`, true
			}
			return `"result":{"content":[{"type":"text","text":"plain"}]}`, true
		}
		return "", false
	})
}

// TestHostileSessionCallAfterLog: a server sends a log message, then a
// hostile answer to a tools/call made on go-sdk's session that
// Client.Session returns (a null result, a result go-sdk's decoding
// panics on, an error). The call returns (the one go-sdk panics on with
// an error saying the answer cannot be read), and only once the log
// message has reached the LogHandler (a slow one).
func TestHostileSessionCallAfterLog(t *testing.T) {
	t.Parallel()
	url := startLogThenHostileCall(t)
	c, handled := slowLogClient(t, url)
	ctx := testCtx(t)
	const rounds = 3
	for _, tool := range []string{"null", "question", "error", "plain"} {
		missed := 0
		for range rounds {
			before := handled.Load()
			sess, err := c.Session(ctx)
			if err != nil {
				t.Fatal(err)
			}
			res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
			switch {
			case tool == "question" && (err == nil || !strings.Contains(err.Error(), "cannot be read")):
				t.Fatalf("%s: %v %+v; want an error saying the answer cannot be read", tool, err, res)
			case tool == "error" && err == nil:
				t.Fatalf("%s: %+v, want the server's error", tool, res)
			case tool == "plain" && err != nil:
				t.Fatalf("%s: %v", tool, err)
			}
			if handled.Load() == before {
				missed++
			}
			// The next call starts with the log message handled.
			deadline := time.Now().Add(5 * time.Second)
			for handled.Load() == before && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
		}
		if missed > 0 {
			t.Errorf("%s: %d of %d calls returned before the log message sent before their answer reached the LogHandler", tool, missed, rounds)
		}
	}
}

// debugSession returns c's go-sdk session, asking a handshake-era server
// for every log message (a 2026-07-28 request asks in its _meta), and
// whether it speaks 2026-07-28.
func debugSession(ctx context.Context, t *testing.T, c *mcpadapter.Client) (*mcp.ClientSession, bool) {
	t.Helper()
	sess, err := c.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	modern := sess.InitializeResult().ProtocolVersion >= "2026-07-28"
	if !modern {
		if err := sess.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
	}
	return sess, modern
}

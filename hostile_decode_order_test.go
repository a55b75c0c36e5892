package mcpadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startLogThenAnswer starts a handshake-era (2025-11-25) server over
// streamable HTTP, without sessions, declaring caps (its capabilities,
// JSON), that answers initialize, and each other request with an id as
// answer says: the answer's member ("result" or "error" and its value),
// and whether it is sent on an event stream after a log message; answer
// gives "" for an empty result. A notification is answered 202.
func startLogThenAnswer(t *testing.T, caps string, answer func(method, tool string) (member string, afterLog bool)) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(b, &req) != nil || len(req.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		member, afterLog := `"result":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"serverInfo":{"name":"raw","version":"1"}}`, false
		if req.Method != "initialize" {
			member, afterLog = answer(req.Method, req.Params.Name)
		}
		if member == "" {
			member = `"result":{}`
		}
		if afterLog {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"before `+req.Method+` `+req.Params.Name+`"}}`)
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", `{"jsonrpc":"2.0","id":`+string(req.ID)+`,`+member+`}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,`+member+`}`)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// startLogThenNullQuestion starts a startLogThenAnswer server that answers
// prompts/get and resources/read with a log message, then a result whose
// question is null (go-sdk's decoding panics on it).
func startLogThenNullQuestion(t *testing.T) string {
	t.Helper()
	return startLogThenAnswer(t, `{"prompts":{},"resources":{},"logging":{}}`, func(method, _ string) (string, bool) {
		if method == "prompts/get" || method == "resources/read" {
			return `"result":` + testserver.NullQuestionResult, true
		}
		return "", false
	})
}

// TestHostileNullQuestionAfterLog: a server sends a log message, then an
// answer to prompts/get or resources/read that go-sdk's decoding panics
// on. The request fails saying the answer cannot be read, and only once
// the log message has reached the LogHandler (a slow one): made through
// the Client and on go-sdk's session Client.Session returns.
func TestHostileNullQuestionAfterLog(t *testing.T) {
	t.Parallel()
	url := startLogThenNullQuestion(t)
	c, handled := slowLogClient(t, url)
	ctx := testCtx(t)
	requests := map[string]func() error{
		"prompts/get": func() error {
			_, err := c.GetPrompt(ctx, "p", nil)
			return err
		},
		"resources/read": func() error {
			_, err := c.ReadResource(ctx, "test://r")
			return err
		},
		"session prompts/get": func() error {
			sess, err := c.Session(ctx)
			if err != nil {
				return err
			}
			_, err = sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: "p"})
			return err
		},
		"session resources/read": func() error {
			sess, err := c.Session(ctx)
			if err != nil {
				return err
			}
			_, err = sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://r"})
			return err
		},
	}
	const rounds = 5
	for name, request := range requests {
		missed := 0
		for range rounds {
			before := handled.Load()
			err := request()
			if err == nil || !strings.Contains(err.Error(), "cannot be read") {
				t.Fatalf("%s: %v; want an error saying the answer cannot be read", name, err)
			}
			if handled.Load() == before {
				missed++
			}
			// The next request starts with the log message handled.
			deadline := time.Now().Add(5 * time.Second)
			for handled.Load() == before && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
		}
		if missed > 0 {
			t.Errorf("%s: %d of %d requests returned before the log message sent before their answer reached the LogHandler", name, missed, rounds)
		}
	}
}

// slowLogClient returns a client of url whose LogHandler takes 100 ms per
// log message, and the count of the messages it has handled.
func slowLogClient(t *testing.T, url string) (*mcpadapter.Client, *atomic.Int64) {
	t.Helper()
	handled := new(atomic.Int64)
	c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{
		Logger: quietLogger(),
		LogHandler: func(context.Context, *mcp.LoggingMessageRequest) {
			time.Sleep(100 * time.Millisecond) // a handler that takes its time
			handled.Add(1)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, handled
}

package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lateProgress is a progress event of the token tok.
func lateProgress(tok string) string {
	return `event: message` + "\n" + `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + tok + `,"progress":1}}` + "\n\n"
}

// startLateScripted serves a go-sdk server of 2026-07-28 whose calls of
// the tool "script" are answered by script instead (with status 200, an
// event stream); every other request is go-sdk's.
func startLateScripted(t *testing.T, script func(r *http.Request, args map[string]any, id, tok string) string) string {
	srv := testserver.New(testserver.Options{Name: "late"})
	srv.AddTool(&mcp.Tool{Name: "script", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("never called: the script answers")
	})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Name") != "script" {
			sdk.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				Meta      map[string]json.RawMessage `json:"_meta"`
				Arguments map[string]any             `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, script(r, req.Params.Arguments, string(req.ID), string(req.Params.Meta["progressToken"])))
	})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// TestLateAnswerHostile: a server that writes, after a call's SSE events,
// bare lines that are not the call's answer (another id, junk, a line
// within an event or before any), or more than one, gets from the client
// what it got before such lines were read as answers: nothing taken but
// the call's own first answer, no panic, the client going on. A bare
// answer with CRLF line ends and one at the stream's end without its line
// end are the call's answer.
func TestLateAnswerHostile(t *testing.T) {
	t.Parallel()
	errLine := func(id, text string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32602,"message":"` + text + `"}}`
	}
	const failed = ""            // the call fails with a TransportError
	const tooLarge = "too large" // the call's result is the Tap's "too large"
	cases := []struct {
		name   string
		script func(id, tok string) string
		want   string // the error result's message, or failed
	}{
		{"the answer", func(id, tok string) string { return lateProgress(tok) + errLine(id, "mine") }, "mine"},
		{"the answer, CRLF", func(id, tok string) string {
			return strings.ReplaceAll(lateProgress(tok), "\n", "\r\n") + errLine(id, "mine") + "\r\n"
		}, "mine"},
		{"another id", func(id, tok string) string { return lateProgress(tok) + errLine(id+"0", "not mine") }, failed},
		{"the id as a string", func(id, tok string) string { return lateProgress(tok) + errLine(`"`+id+`"`, "not mine") }, failed},
		{"a request with the id", func(id, tok string) string {
			return lateProgress(tok) + `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}` + "\n"
		}, failed},
		{"junk", func(id, tok string) string {
			return lateProgress(tok) + `{"jsonrpc":"2.0","id":` + id + `,"error":` + "\n"
		}, failed},
		{"junk, then the answer", func(id, tok string) string {
			return lateProgress(tok) + "{junk: x}\n\n" + errLine(id, "after junk")
		}, failed},
		{"two answers", func(id, tok string) string {
			return lateProgress(tok) + errLine(id, "first") + "\n" + errLine(id, "second") + "\n"
		}, "first"},
		{"an answer in an event, then a bare one", func(id, tok string) string {
			return lateProgress(tok) + "event: message\ndata: " + errLine(id, "in the event") + "\n\n" + errLine(id, "bare")
		}, "in the event"},
		{"within an event", func(id, tok string) string {
			return strings.TrimSuffix(lateProgress(tok), "\n") + errLine(id, "within") + "\n\n"
		}, failed},
		{"before any event", func(id, tok string) string { return errLine(id, "first line") + "\n\n" + lateProgress(tok) }, failed},
		{"after a comment only", func(id, tok string) string { return ": hi\n" + errLine(id, "after a comment") }, failed},
		{"over the limit", func(id, tok string) string {
			return lateProgress(tok) + errLine(id, strings.Repeat("x", 70<<10))
		}, tooLarge}, // the Tap's, for any message over the limit
	}
	url := startLateScripted(t, func(_ *http.Request, args map[string]any, id, tok string) string {
		i, _ := args["case"].(float64)
		return cases[int(i)].script(id, tok)
	})
	for _, disable := range []bool{false, true} {
		c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{Logger: quietLogger(), ProtocolVersion: testserver.ModernVersion,
			DisableFastPath: disable, MaxMessageBytes: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for i, cs := range cases {
			t.Run(fmt.Sprintf("%s/DisableFastPath=%v", cs.name, disable), func(t *testing.T) {
				res, err := c.CallTool(testCtx(t), "script", json.RawMessage(fmt.Sprintf(`{"case":%d}`, i)), &mcpadapter.CallOptions{Progress: func(mcpadapter.Progress) {}})
				if cs.want == failed {
					var te *mcpadapter.TransportError
					if !errors.As(err, &te) {
						t.Fatalf("CallTool = %+v %q, %v; want a TransportError", res, res.Text(), err)
					}
					return
				}
				if cs.want == tooLarge {
					if err != nil || res == nil || !strings.Contains(res.Text(), "the tool's result was too large") {
						t.Fatalf("CallTool = %+v, %v; want the result too large", res, err)
					}
					return
				}
				want := fmt.Sprintf("Error calling tool %q: %s (MCP error %d)", "script", cs.want, jsonrpc.CodeInvalidParams)
				if err != nil || res == nil || res.Text() != want {
					t.Fatalf("CallTool = %+v, %v; want the error result %q", res, err, want)
				}
			})
		}
		res, err := c.CallTool(testCtx(t), "echo", json.RawMessage(`{"text":"on"}`), nil)
		if err != nil || res.Text() != "on" {
			t.Fatalf("the client does not go on: %+v, %v", res, err)
		}
	}
}

// TestLateAnswerNoCrossing: two calls in flight, each answered bare, after
// its events, with the other's id: neither takes the other's answer.
func TestLateAnswerNoCrossing(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	ids := map[string]string{} // a call's text: its id
	both := make(chan struct{})
	url := startLateScripted(t, func(r *http.Request, args map[string]any, id, tok string) string {
		who, _ := args["who"].(string)
		mu.Lock()
		ids[who] = id
		if len(ids) == 2 {
			close(both)
		}
		mu.Unlock()
		select {
		case <-both:
		case <-r.Context().Done():
			return ""
		}
		other := map[string]string{"a": "b", "b": "a"}[who]
		mu.Lock()
		defer mu.Unlock()
		return lateProgress(tok) + `{"jsonrpc":"2.0","id":` + ids[other] + `,"error":{"code":-32602,"message":"for ` + other + `"}}`
	})
	for _, disable := range []bool{false, true} {
		mu.Lock()
		clear(ids)
		both = make(chan struct{})
		mu.Unlock()
		c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{Logger: quietLogger(), ProtocolVersion: testserver.ModernVersion, DisableFastPath: disable})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var wg sync.WaitGroup
		for _, who := range []string{"a", "b"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := c.CallTool(testCtx(t), "script", json.RawMessage(`{"who":"`+who+`"}`), &mcpadapter.CallOptions{Progress: func(mcpadapter.Progress) {}})
				var te *mcpadapter.TransportError
				if !errors.As(err, &te) {
					t.Errorf("call %s (DisableFastPath=%v) = %+v, %v; want a TransportError", who, disable, res, err)
				}
			}()
		}
		wg.Wait()
	}
}

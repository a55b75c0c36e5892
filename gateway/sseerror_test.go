package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestErrorStatusAfterProgressReachesClients: a call whose server reports
// progress, then refuses the call's params (InvalidParams, which has an
// HTTP status of its own at 2026-07-28) ends, for a real go-sdk client of
// 2026-07-28 and of the handshake era, with the server's error, through
// the fast path and go-sdk's handler alike, whichever era the server
// speaks (a 2026-07-28 server's go-sdk handler writes the error bare
// after its events: the adapter's client reads it there).
func TestErrorStatusAfterProgressReachesClients(t *testing.T) {
	for _, era := range []testserver.Era{testserver.Modern, testserver.Legacy} {
		srv := testserver.New(testserver.Options{Name: "bp", Era: era})
		addBadParamsTool(srv)
		var opts []testserver.StreamableOption
		if era == testserver.Modern {
			opts = append(opts, testserver.Stateless()) // the gateway's calls to it are of 2026-07-28
		}
		servers := []Server{{Name: "bp", Target: testserver.StartStreamable(t, srv, opts...).URL}}
		for _, path := range []string{"fast", "slow"} {
			opts := &Options{slowPathOnly: path == "slow"}
			_, url := startGateway(t, servers, opts)
			for _, v := range []string{modernVersion, testserver.LegacyVersion} {
				t.Run(fmt.Sprintf("server %s/%s path/client %s", era, path, v), func(t *testing.T) {
					progress := make(chan struct{}, 8)
					cs := connect(t, url, v, &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
						progress <- struct{}{}
					}})
					ctx := testCtx(t, 30*time.Second)
					params := &mcp.CallToolParams{Name: "bad_params", Arguments: map[string]any{}}
					params.SetProgressToken("tok")
					res, err := cs.CallTool(ctx, params)
					var rpc *jsonrpc.Error
					if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpc.Message, "the server refuses these params") {
						t.Fatalf("CallTool = %v, %v; want the server's invalid params error", res, err)
					}
					// go-sdk's client hands notifications to their handler
					// beside the call's answer.
					for i := range 2 {
						select {
						case <-progress:
						case <-ctx.Done():
							t.Fatalf("%d progress reports, want 2", i)
						}
					}
				})
			}
		}
	}
}

// TestSSEErrorWriterOnlyAfterEvents: the writer go-sdk's handler writes
// to frames a body as an SSE event only when a status comes after an
// event stream's events; every other write goes through as written.
func TestSSEErrorWriterOnlyAfterEvents(t *testing.T) {
	const msg = `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"no"}}`
	cases := []struct {
		name  string
		write func(w http.ResponseWriter)
		code  int
		ctype string
		body  string
	}{
		{"error alone", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			_, _ = w.Write([]byte(msg))
		}, 400, "application/json", msg},
		{"error after events", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			_, _ = w.Write([]byte("event: message\ndata: {}\n\n"))
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			_, _ = w.Write([]byte(msg))
		}, 200, "text/event-stream", "event: message\ndata: {}\n\nevent: message\ndata: " + msg + "\n\n"},
		{"error with lines after events", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
			_, _ = w.Write([]byte("event: message\ndata: {}\n\n"))
			w.WriteHeader(404)
			_, _ = w.Write([]byte("{\r\n\"a\":\r1}\n"))
			_, _ = w.Write([]byte("tail"))
		}, 200, "text/event-stream; charset=utf-8", "event: message\ndata: {}\n\nevent: message\ndata: {\ndata: \"a\":1}\n\ntail"},
		{"status after the header, no events", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			w.WriteHeader(400)
			_, _ = w.Write([]byte(msg))
		}, 200, "text/event-stream", msg},
		{"status after a JSON body", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("{}"))
			w.WriteHeader(400)
			_, _ = w.Write([]byte(msg))
		}, 200, "application/json", "{}" + msg},
		{"a second 200 after events, then an event", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte("event: message\ndata: {}\n\n"))
			w.WriteHeader(200)
			_, _ = w.Write([]byte("event: message\ndata: " + msg + "\n\n"))
		}, 200, "text/event-stream", "event: message\ndata: {}\n\nevent: message\ndata: " + msg + "\n\n"},
		{"a redirect status after events", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte("event: message\ndata: {}\n\n"))
			w.WriteHeader(302)
			_, _ = w.Write([]byte(msg))
		}, 200, "text/event-stream", "event: message\ndata: {}\n\n" + msg},
		{"status after events of a 400", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(400)
			_, _ = w.Write([]byte("event: message\ndata: {}\n\n"))
			w.WriteHeader(400)
			_, _ = w.Write([]byte(msg))
		}, 400, "text/event-stream", "event: message\ndata: {}\n\n" + msg},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			c.write(&sseErrorWriter{ResponseWriter: rec})
			if rec.Code != c.code || rec.Header().Get("Content-Type") != c.ctype && c.code != 200 || rec.Body.String() != c.body {
				t.Errorf("got %d %q %q, want %d %q %q", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String(), c.code, c.ctype, c.body)
			}
		})
	}
	// Flush and Unwrap reach the writer wrapped.
	rec := httptest.NewRecorder()
	w := &sseErrorWriter{ResponseWriter: rec}
	if err := http.NewResponseController(w).Flush(); err != nil || !rec.Flushed {
		t.Errorf("Flush: %v, flushed %v", err, rec.Flushed)
	}
	if w.Unwrap() != rec {
		t.Error("Unwrap does not return the writer wrapped")
	}
}

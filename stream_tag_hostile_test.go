package mcpadapter_test

//lint:file-ignore SA1019 logging lives in the handshake era, which these messages come from

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStreamTagReachesNoOne: whatever log messages a hostile server sends
// on a call's event stream (its _meta null, huge, doubled or under an
// escaped name; a request with an id; a response member too; spread over
// data lines; text that looks like a tag), the tag the reader puts in
// them reaches no LogHandler, no MessageHandler and no trace, with the
// fast path on and off.
func TestStreamTagReachesNoOne(t *testing.T) {
	t.Parallel()
	const tagPrefix = "mcpadapter-order-"
	log := func(params string) string {
		return `{"jsonrpc":"2.0","method":"notifications/message","params":` + params + `}`
	}
	huge := `{"level":"info","data":"huge","_meta":{` + strings.Repeat(`"k":"`+strings.Repeat("m", 1000)+`",`, 200) + `"z":1}}`
	events := []testserver.SSEEvent{
		{Data: log(`{"level":"info","data":"plain"}`)},
		{Data: log(`{"level":"info","data":"null meta","_meta":null}`)},
		{Data: log(`{"_meta":{"a":1},"level":"info","data":"object meta"}`)},
		{Data: log(`{"level":"info","data":"empty meta","_meta":{}}`)},
		{Data: log(huge)},
		{Data: log(`{"level":"info","data":"two metas","_meta":{"a":1},"_meta":{"b":2}}`)},
		{Data: log(`{"level":"info","data":"escaped meta","\u005fmeta":{"a":1},"_meta":{}}`)},
		{Data: `{"jsonrpc":"2.0","id":99,"method":"notifications/message","params":{"level":"info","data":"with id"}}`},
		{Data: `{"jsonrpc":"2.0","method":"notifications/message","result":{},"params":{"level":"info","data":"with result"}}`},
		{Data: `{"jsonrpc":"2.0","method":"notifications/message",` + "\n" + `"params":{"level":"info",` + "\n" + `"data":"lines"}}`},
		{Data: log(`{"level":"info","data":"` + tagPrefix + `0-stream","_meta":{"` + tagPrefix + `0-stream":"1"}}`)},
		{Data: scriptedAnswer},
	}
	peer := testserver.StartScriptedHTTP(t, testserver.Legacy, false)
	for _, disable := range []bool{false, true} {
		t.Run(fmt.Sprintf("fastpath=%v", !disable), func(t *testing.T) {
			var mu sync.Mutex
			var seen []string
			note := func(what string, v any) {
				b, _ := json.Marshal(v)
				mu.Lock()
				seen = append(seen, what+": "+string(b))
				mu.Unlock()
			}
			var trace syncBuffer
			c, err := mcpadapter.NewClient(peer.URL, &mcpadapter.ClientOptions{
				DisableFastPath: disable,
				Trace:           true,
				Logger:          slog.New(slog.NewTextHandler(&trace, &slog.HandlerOptions{Level: slog.LevelDebug})),
				LogHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
					note("log", req.Params)
				},
				MessageHandler: func(_ context.Context, method string, req mcp.Request) {
					note(method, req.GetParams())
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			for i := range 3 {
				res, err := c.CallTool(ctx, testserver.ScriptedTool,
					testserver.HTTPScriptArgs(testserver.HTTPScript{Events: events}), realCall)
				if err != nil || res.Text() != "done" {
					t.Fatalf("call %d: %v %+v", i, err, res)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			logs := 0
			for _, s := range seen {
				if strings.HasPrefix(s, "log: ") {
					logs++
				}
				if strings.Contains(strings.ReplaceAll(s, tagPrefix+"0-stream", ""), tagPrefix) {
					t.Errorf("a handler saw the tag: %.300s", s)
				}
			}
			if logs < 3*8 {
				t.Errorf("the LogHandler saw %d log messages, want at least %d", logs, 3*8)
			}
			if tr := strings.ReplaceAll(trace.String(), tagPrefix+"0-stream", ""); strings.Contains(tr, tagPrefix) {
				i := strings.Index(tr, tagPrefix)
				t.Errorf("the trace shows the tag: %q", tr[max(0, i-200):min(len(tr), i+100)])
			}
			if !strings.Contains(trace.String(), "lines") {
				t.Error("the trace shows no message")
			}
		})
	}
}

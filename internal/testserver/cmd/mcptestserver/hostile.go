package main

// Hostile behaviours for reliability tests: tools and stdout filters that
// misbehave the way broken or malicious servers do.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdoutClosed is set by the close_stdout tool: the process then stays
// alive after its session ends, until a signal stops it.
var stdoutClosed atomic.Bool

// addHostileTools registers pid, big and close_stdout.
func addHostileTools(srv *mcp.Server, out *lockedWriter) {
	srv.AddTool(&mcp.Tool{Name: "pid", Description: "Return the server's process id.",
		InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(os.Getpid())}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "big", Description: "Return mb MiB of text.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"mb":{"type":"integer","minimum":0,"maximum":1024}},"required":["mb"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in testserver.BigIn
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			if in.MB < 0 || in.MB > 1024 {
				return nil, fmt.Errorf("mb %d out of range", in.MB)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: testserver.BigText(in.MB)}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "close_stdout", Description: "Close stdout and keep running, never answering.",
		InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			stdoutClosed.Store(true)
			if out != nil {
				out.close()
			}
			fmt.Fprintln(os.Stderr, testserver.ClosedStdoutMessage)
			for { // never answer, whatever the client says
				time.Sleep(time.Hour)
			}
		})
}

// isResponse reports whether msg (one JSON-RPC message) is a response, and
// returns its id.
func isResponse(msg []byte) (json.RawMessage, bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(bytes.TrimSpace(msg), &m) != nil {
		return nil, false
	}
	return m.ID, m.Method == "" && len(m.ID) > 0 && (m.Result != nil || m.Error != nil)
}

// hostileStdout returns the lines to write before each message on stdout:
// with garbage, a non-JSON line and a truncated JSON object before every
// response; with wrongIDs, responses to ids nobody asked for (a number, a
// string, and the id of the previous response, already answered).
func hostileStdout(garbage, wrongIDs bool) func([]byte) []byte {
	var mu sync.Mutex
	var prev json.RawMessage
	return func(msg []byte) []byte {
		id, ok := isResponse(msg)
		if !ok {
			return nil
		}
		var b bytes.Buffer
		if garbage {
			b.WriteString(testserver.GarbageLine + "\n")
			b.WriteString(testserver.TruncatedJSON + "\n")
		}
		if wrongIDs {
			b.WriteString(`{"jsonrpc":"2.0","id":987654321,"result":{"content":[{"type":"text","text":"` + testserver.WrongIDText + `"}]}}` + "\n")
			b.WriteString(`{"jsonrpc":"2.0","id":"nobody-asked","error":{"code":-32603,"message":"` + testserver.WrongIDText + `"}}` + "\n")
			mu.Lock()
			if prev != nil {
				fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}`+"\n", prev, testserver.WrongIDText)
			}
			prev = append(json.RawMessage(nil), id...)
			mu.Unlock()
		}
		return b.Bytes()
	}
}

// floodMiddleware writes n notifications (alternately notifications/message
// and notifications/progress, with the call's progress token if it has one)
// straight to stdout before every tools/call is handled.
func floodMiddleware(out *lockedWriter, n int) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			token := json.RawMessage(`"flood"`)
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p != nil {
				if t := p.GetProgressToken(); t != nil {
					if b, err := json.Marshal(t); err == nil {
						token = b
					}
				}
			}
			var b bytes.Buffer
			for i := range n {
				if i%2 == 0 {
					fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"flood","data":"flood %d"}}`+"\n", i)
				} else {
					fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"message":"flood %d"}}`+"\n", token, i, i)
				}
				if b.Len() > 64*1024 {
					out.writeRaw(b.Bytes())
					b.Reset()
				}
			}
			out.writeRaw(b.Bytes())
			return next(ctx, method, req)
		}
	}
}

// vendorNoteMiddleware writes a notification of a method no client knows
// (go-sdk drops it before any handler) straight to stdout before every
// tools/call is handled.
func vendorNoteMiddleware(out *lockedWriter) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				out.println(`{"jsonrpc":"2.0","method":"notifications/vendor/note","params":{"note":"hello"}}`)
			}
			return next(ctx, method, req)
		}
	}
}

package main

// Hostile behaviours for reliability tests: tools and stdout filters that
// misbehave the way broken or malicious servers do.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdoutClosed is set by the close_stdout tool: the process then stays
// alive after its session ends, until a signal stops it.
var stdoutClosed atomic.Bool

// addHostileTools registers pid, big, close_stdout, ping_flood, spam and
// bad_response.
func addHostileTools(srv *mcp.Server, out *lockedWriter) {
	addFloodTools(srv, out)
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

// countIn is the input of ping_flood and spam.
type countIn struct {
	N int `json:"n"`
}

var countSchema = json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":10000000}},"required":["n"]}`)

// addFloodTools registers ping_flood, spam and bad_response.
func addFloodTools(srv *mcp.Server, out *lockedWriter) {
	srv.AddTool(&mcp.Tool{Name: "ping_flood", Description: "Write n ping requests to stdout, then answer.", InputSchema: countSchema},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n, err := count(req)
			if err != nil {
				return nil, err
			}
			writeLines(out, n, func(b *bytes.Buffer, i int) {
				fmt.Fprintf(b, `{"jsonrpc":"2.0","id":"flood-%d","method":"ping"}`+"\n", i)
			})
			return textResult(fmt.Sprintf("sent %d pings", n)), nil
		})
	srv.AddTool(&mcp.Tool{Name: "spam", Description: "Write n non-JSON lines to stdout, then answer.", InputSchema: countSchema},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n, err := count(req)
			if err != nil {
				return nil, err
			}
			writeLines(out, n, func(b *bytes.Buffer, i int) {
				b.WriteString(testserver.SpamLine(i))
				b.WriteByte('\n')
			})
			return textResult(fmt.Sprintf("wrote %d lines", n)), nil
		})
	srv.AddTool(&mcp.Tool{Name: "bad_response", Description: "Answer with a response that cannot be decoded.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"kind":{"type":"string"}},"required":["kind"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				Kind string `json:"kind"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			res := textResult("a bad response")
			res.StructuredContent = map[string]any{"value": testserver.BadMarker + in.Kind}
			return res, nil
		})
}

// addDeepSchemaTool registers deep_schema, whose input schema the stdout
// writer nests testserver.DeepNesting levels deep.
func addDeepSchemaTool(srv *mcp.Server) {
	srv.AddTool(&mcp.Tool{Name: "deep_schema", Description: "A tool whose input schema nests too deep.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"description":"` + testserver.BadMarker + testserver.BadDeep + `"}}}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult("unreachable"), nil
		})
}

func count(req *mcp.CallToolRequest) (int, error) {
	var in countIn
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
		return 0, err
	}
	if in.N < 0 || in.N > 10_000_000 {
		return 0, fmt.Errorf("n %d out of range", in.N)
	}
	return in.N, nil
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// writeLines writes n lines made by line straight to stdout, 64 KiB at a
// time, stopping if stdout fails.
func writeLines(out *lockedWriter, n int, line func(*bytes.Buffer, int)) {
	var b bytes.Buffer
	for i := range n {
		line(&b, i)
		if b.Len() > 64*1024 {
			if out.writeRaw(b.Bytes()) != nil {
				return
			}
			b.Reset()
		}
	}
	_ = out.writeRaw(b.Bytes())
}

// spoil rewrites a message holding the JSON string BadMarker+kind into
// the undecodable line that kind names; other messages are returned as
// they are.
func spoil(msg []byte) []byte {
	i := bytes.Index(msg, []byte(`"`+testserver.BadMarker))
	if i < 0 {
		return msg
	}
	end := bytes.IndexByte(msg[i+1:], '"')
	if end < 0 {
		return msg
	}
	end += i + 2
	kind := string(msg[i+1+len(testserver.BadMarker) : end-1])
	var out []byte
	switch kind {
	case testserver.BadNaN:
		out = slices.Concat(msg[:i], []byte("NaN"), msg[end:])
	case testserver.BadNaNIDLast:
		out = idLast(slices.Concat(msg[:i], []byte("NaN"), msg[end:]))
	case testserver.BadTruncated:
		out = append(slices.Clone(msg[:i]), '\n')
	case testserver.BadDeep:
		deep := strings.Repeat("[", testserver.DeepNesting) + strings.Repeat("]", testserver.DeepNesting)
		out = slices.Concat(msg[:i], []byte(deep), msg[end:])
	default:
		if s, ok := strings.CutPrefix(kind, testserver.ScriptedKind); ok {
			return scripted(msg, s)
		}
		return msg
	}
	return out
}

// scripted returns the reply that enc (base64) holds, with the id of msg,
// a go-sdk response line ({"jsonrpc":"2.0","id":N,...}), in place of
// testserver.ScriptedIDMark (see testserver.ScriptedArgs).
func scripted(msg []byte, enc string) []byte {
	reply, err := base64.RawURLEncoding.DecodeString(enc)
	const head = `{"jsonrpc":"2.0","id":`
	comma := bytes.IndexByte(msg[min(len(head), len(msg)):], ',')
	if err != nil || !bytes.HasPrefix(msg, []byte(head)) || comma < 0 {
		return msg
	}
	id := msg[len(head) : len(head)+comma]
	return append(bytes.ReplaceAll(reply, []byte(testserver.ScriptedIDMark), id), '\n')
}

// idLast moves the id of a go-sdk response line ({"jsonrpc":"2.0","id":N,...})
// to its end.
func idLast(msg []byte) []byte {
	const head = `{"jsonrpc":"2.0","id":`
	if !bytes.HasPrefix(msg, []byte(head)) {
		return msg
	}
	comma := bytes.IndexByte(msg[len(head):], ',')
	if comma < 0 {
		return msg
	}
	id := msg[len(head) : len(head)+comma]
	rest := bytes.TrimRight(msg[len(head)+comma+1:], "\n")
	rest = bytes.TrimSuffix(rest, []byte("}"))
	return slices.Concat([]byte(`{"jsonrpc":"2.0",`), rest, []byte(`,"id":`), id, []byte("}\n"))
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

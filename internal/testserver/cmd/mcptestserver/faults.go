package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lockedWriter serializes whole writes to stdout, so that banner lines never
// split a JSON-RPC message (go-sdk writes each message in one Write).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
	// before, if set, returns bytes to write before each message go-sdk
	// writes (hostile output: garbage, responses nobody asked for).
	before func(msg []byte) []byte
	closed bool
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, os.ErrClosed
	}
	p = spoil(p)
	if l.before != nil {
		if pre := l.before(p); len(pre) > 0 {
			if _, err := l.w.Write(pre); err != nil {
				return 0, err
			}
		}
	}
	return l.w.Write(p)
}

// writeRaw writes p as it is, without the before hook.
func (l *lockedWriter) writeRaw(p []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return os.ErrClosed
	}
	_, err := l.w.Write(p)
	return err
}

// close closes the underlying stdout for good (the close_stdout tool).
func (l *lockedWriter) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if c, ok := l.w.(io.Closer); ok {
		_ = c.Close()
	}
}

// Close implements io.Closer; stdout stays open.
func (l *lockedWriter) Close() error { return nil }

func (l *lockedWriter) println(s string) { _ = l.writeRaw([]byte(s + "\n")) }

// polluteMiddleware prints the non-JSON banner on stdout before every
// tools/call is handled.
func polluteMiddleware(out *lockedWriter) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				out.println(testserver.PolluteBanner)
			}
			return next(ctx, method, req)
		}
	}
}

// delayMiddleware sleeps for d (or until ctx is done) before handling method.
func delayMiddleware(method string, d time.Duration) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, m string, req mcp.Request) (mcp.Result, error) {
			if m == method {
				t := time.NewTimer(d)
				defer t.Stop()
				select {
				case <-t.C:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return next(ctx, m, req)
		}
	}
}

// stdinFilter says which requests filterStdin keeps from the server.
type stdinFilter struct {
	ignoreDiscover bool   // drop server/discover requests (never answered)
	ignorePing     bool   // drop ping requests (never answered)
	exitOnDiscover bool   // exit with code 4 if the first request is server/discover
	neverAnswer    string // drop tools/call requests of this tool (never answered, cancellation ignored)
	stopReading    string // after a tools/call of this tool, never read stdin again
	logMethods     bool   // write "recv PID METHOD" to stderr for every message read, in order
}

func (f stdinFilter) active() bool {
	return f.ignoreDiscover || f.ignorePing || f.exitOnDiscover || f.neverAnswer != "" || f.stopReading != "" || f.logMethods
}

// filterStdin returns a reader of the lines of r, filtered by f. With
// f.stopReading set, the line that calls that tool is passed on (the call
// is answered) and then r is never read again: the server goes on writing
// but its stdin pipe fills up, as a single-threaded server busy in a tool
// does.
//
// This has to happen below go-sdk: a handshake-era go-sdk server answers
// server/discover itself, before any receiving middleware runs.
func filterStdin(r io.Reader, f stdinFilter) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReader(r)
		sawRequest := false
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				method, isRequest := requestMethod(line)
				if f.logMethods && method != "" {
					fmt.Fprintf(os.Stderr, "%s%d %s\n", testserver.RecvPrefix, os.Getpid(), method)
				}
				discover := isRequest && method == "server/discover"
				if f.exitOnDiscover && isRequest && !sawRequest && discover {
					fmt.Fprintln(os.Stderr, "mcptestserver: first request is server/discover; exiting")
					os.Exit(testserver.DiscoverExitCode)
				}
				sawRequest = sawRequest || isRequest
				call := ""
				if isRequest && method == "tools/call" {
					call = toolName(line)
				}
				dropped := (f.neverAnswer != "" && call == f.neverAnswer) || (f.ignorePing && isRequest && method == "ping")
				if !(f.ignoreDiscover && discover) && !dropped {
					if _, werr := pw.Write(line); werr != nil {
						return
					}
				}
				if f.stopReading != "" && call == f.stopReading {
					fmt.Fprintln(os.Stderr, testserver.StoppedReadingMessage)
					for { // never read stdin again; the process lives on
						time.Sleep(time.Hour)
					}
				}
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

// requestMethod reports the method of a JSON-RPC request line and whether it
// is a request (has both method and id).
func requestMethod(line []byte) (string, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return "", false
	}
	var msg struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &msg) != nil {
		return "", false
	}
	return msg.Method, msg.Method != "" && len(msg.ID) > 0 && string(msg.ID) != "null"
}

// toolName returns the tool named by a tools/call request line.
func toolName(line []byte) string {
	var msg struct {
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(bytes.TrimSpace(line), &msg) != nil {
		return ""
	}
	return msg.Params.Name
}

// noisyMiddleware writes one very long line and then a lot of ordinary
// lines to stderr before every tool call: a client that stops draining
// stderr makes this server block.
func noisyMiddleware() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, m string, req mcp.Request) (mcp.Result, error) {
			if m == "tools/call" {
				fmt.Fprintln(os.Stderr, "debug payload: "+strings.Repeat("x", 70*1024))
				for i := range 200 {
					fmt.Fprintf(os.Stderr, "step %d %s\n", i, strings.Repeat("y", 1000))
				}
			}
			return next(ctx, m, req)
		}
	}
}

// refuseMiddleware answers method with a JSON-RPC error.
func refuseMiddleware(method string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, m string, req mcp.Request) (mcp.Result, error) {
			if m == method {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "database unavailable"}
			}
			return next(ctx, m, req)
		}
	}
}

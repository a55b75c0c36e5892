package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveStdio serves one session over stdin/stdout until stdin closes.
func serveStdio(ctx context.Context, c *config) error {
	out := &lockedWriter{w: os.Stdout}
	if c.pollute {
		out.println(testserver.PolluteBanner)
	}
	startup(c)
	if c.hang {
		go func() { _, _ = io.Copy(io.Discard, os.Stdin) }()
		for { // wake up hourly, so the runtime never reports a deadlock
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(time.Hour):
			}
		}
	}
	if c.garbage || c.wrongIDs {
		out.before = hostileStdout(c.garbage, c.wrongIDs)
	}
	var in io.ReadCloser = os.Stdin
	if f := c.stdinFilter(); f.active() {
		in = filterStdin(os.Stdin, f)
	}
	srv := newServer(c, out)
	err := srv.Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
	if stdoutClosed.Load() {
		// close_stdout: keep running after the session ends, until a
		// signal (SIGKILL with -ignore-sigterm) stops the process.
		fmt.Fprintln(os.Stderr, "mcptestserver: stdout closed; still running")
		for ctx.Err() == nil {
			select {
			case <-ctx.Done():
			case <-time.After(time.Hour):
			}
		}
		return nil
	}
	return err
}

// serveHTTP serves streamable HTTP or SSE until ctx is done.
func serveHTTP(ctx context.Context, c *config) error {
	l, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	srv := newServer(c, &lockedWriter{w: os.Stdout})
	getServer := func(*http.Request) *mcp.Server { return srv }
	var h http.Handler
	path := "/mcp"
	if c.transport == "sse" {
		h = mcp.NewSSEHandler(getServer, nil)
		path = "/sse"
	} else {
		h = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
			Stateless:      c.stateless,
			SessionTimeout: c.sessionTimeout,
			JSONResponse:   c.jsonResponse,
		})
	}
	fmt.Fprintf(os.Stderr, "%shttp://%s%s\n", testserver.ListeningPrefix, l.Addr(), path)
	startup(c)
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = hs.Close()
	}()
	if err := hs.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeParkedShutdown: `serve` with keep-alive connections idle past
// the time it parks them (raw clients' and a go-sdk client's, whose
// session's standalone stream it took over) answers on them after each
// idle time, and SIGTERM still ends it cleanly: it exits without error
// and each parked connection is closed (its client reads its end).
func TestServeParkedShutdown(t *testing.T) {
	dir, cfg := oldServerConfig(t)
	p := startServe(t, dir, nil, "--config", cfg, "--listen", "127.0.0.1:0")
	host := strings.TrimPrefix(strings.TrimSuffix(p.URL, "/mcp"), "http://")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := mcp.NewClient(&mcp.Implementation{Name: "parked", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.URL, HTTPClient: &http.Client{Transport: tr}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for i := range 3 {
		time.Sleep(200 * time.Millisecond) // its connection parked
		text := fmt.Sprintf("call %d", i)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
		if err != nil || res.IsError || !strings.Contains(fmt.Sprint(res.Content[0]), text) {
			t.Fatalf("call %d after an idle time: %v %+v", i, err, res)
		}
	}

	var raws []*bufio.Reader
	for i := range 10 {
		conn, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		br := bufio.NewReader(conn)
		for j := range 2 {
			if _, err := fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", host); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("connection %d, request %d: %v", i, j, err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Close {
				t.Fatalf("connection %d, request %d: %s, Connection: close %v", i, j, resp.Status, resp.Close)
			}
			time.Sleep(100 * time.Millisecond) // parked
		}
		raws = append(raws, br)
	}

	if err := p.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("serve after SIGTERM: %v\n%s", err, p.stderr)
	}
	for i, br := range raws {
		if b, err := br.ReadByte(); !errors.Is(err, io.EOF) {
			t.Errorf("parked connection %d after serve ended: %q %v, want its end", i, b, err)
		}
	}
}

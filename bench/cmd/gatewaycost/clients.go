package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	era2025 = "2025-11-25"
	era2026 = "2026-07-28"
)

// echoArgs are the arguments of every call.
var echoArgs = json.RawMessage(`{"text":"hello"}`)

// endpoint is what a client connects to: a stdio server it starts itself,
// a streamable HTTP URL, or a legacy SSE URL (mcp-hub's).
type endpoint struct {
	stdio []string // command and arguments
	url   string
	sse   bool
}

// session is one go-sdk client session and the name of its echo tool.
type session struct {
	cs      *mcp.ClientSession
	tool    string
	version string
	own     *http.Client // the session's own client (openOwn), or nil
}

// open connects a go-sdk client at protocol version era and finds the
// echo tool (by suffix: aggregators prefix it).
func open(ctx context.Context, ep endpoint, era string, hc *http.Client) (*session, error) {
	var t mcp.Transport
	switch {
	case ep.stdio != nil:
		cmd := exec.Command(ep.stdio[0], ep.stdio[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		t = &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}
	case ep.sse:
		t = &mcp.SSEClientTransport{Endpoint: ep.url, HTTPClient: hc}
	default:
		t = &mcp.StreamableClientTransport{Endpoint: ep.url, HTTPClient: hc}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "gatewaycost", Version: "0"}, nil)
	cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	s := &session{cs: cs, version: cs.InitializeResult().ProtocolVersion}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			_ = cs.Close()
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		if tool.Name == "echo" || strings.HasSuffix(tool.Name, "echo") {
			s.tool = tool.Name
			break
		}
	}
	if s.tool == "" {
		_ = cs.Close()
		return nil, errors.New("no echo tool")
	}
	return s, nil
}

// call makes one echo call and checks its answer.
func (s *session) call(ctx context.Context) error {
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: s.tool, Arguments: echoArgs})
	if err != nil {
		return err
	}
	if res.IsError || len(res.Content) != 1 {
		return fmt.Errorf("unexpected result %+v", res)
	}
	return nil
}

func (s *session) close() {
	_ = s.cs.Close()
	if s.own != nil {
		s.own.CloseIdleConnections()
	}
}

// openOwn is open with an http.Client of the session's own, whose
// connections no other session shares: the session keeps its own
// keep-alive connection between its requests, as a client process does.
func openOwn(ctx context.Context, ep endpoint, era string) (*session, error) {
	hc := httpClient()
	s, err := open(ctx, ep, era, hc)
	if err != nil {
		hc.CloseIdleConnections()
		return nil, err
	}
	s.own = hc
	return s, nil
}

// countTools lists the tools of ep at era.
func countTools(ctx context.Context, ep endpoint, era string, hc *http.Client) (int, error) {
	var t mcp.Transport = &mcp.StreamableClientTransport{Endpoint: ep.url, HTTPClient: hc}
	if ep.sse {
		t = &mcp.SSEClientTransport{Endpoint: ep.url, HTTPClient: hc}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "gatewaycost", Version: "0"}, nil)
	cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		return 0, err
	}
	defer cs.Close()
	n := 0
	for _, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

// httpClient is a keep-alive client for many sessions to one host.
func httpClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 4096
	t.MaxIdleConnsPerHost = 4096
	return &http.Client{Transport: t}
}

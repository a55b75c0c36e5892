package testserver

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var eras = []struct {
	era  Era
	want string // version negotiated by a go-sdk client over stdio/in-memory
}{
	{Modern, ModernVersion},
	{Legacy, LegacyVersion},
}

func TestInMemory(t *testing.T) {
	t.Parallel()
	for _, e := range eras {
		t.Run(e.era.String(), func(t *testing.T) {
			var log progressLog
			cs := connect(t, inMemory(t, New(Options{Era: e.era})), &log)
			checkBasics(t, cs, &log, e.want)
			if got := cs.InitializeResult().ServerInfo; got == nil || got.Name != DefaultName {
				t.Errorf("ServerInfo = %+v", got)
			}
		})
	}
}

func TestStdio(t *testing.T) {
	t.Parallel()
	for _, e := range eras {
		t.Run(e.era.String(), func(t *testing.T) {
			var log progressLog
			cmd := Command(t, "-era", e.era.String(), "-name", "stdio-"+e.era.String())
			cs := connect(t, &mcp.CommandTransport{Command: cmd}, &log)
			checkBasics(t, cs, &log, e.want)
			if got := cs.InitializeResult().ServerInfo; got == nil || got.Name != "stdio-"+e.era.String() {
				t.Errorf("ServerInfo = %+v", got)
			}
		})
	}
}

func TestStreamable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		era       Era
		stateless bool
		want      string
	}{
		// go-sdk serves 2026-07-28 over HTTP only statelessly.
		{"modern/stateless", Modern, true, ModernVersion},
		{"modern/stateful", Modern, false, LegacyVersion},
		{"legacy/stateless", Legacy, true, LegacyVersion},
		{"legacy/stateful", Legacy, false, LegacyVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []StreamableOption
			if tt.stateless {
				opts = append(opts, Stateless())
			}
			hs := StartStreamable(t, New(Options{Era: tt.era}), opts...)
			var log progressLog
			cs := connect(t, &mcp.StreamableClientTransport{Endpoint: hs.URL}, &log)
			checkBasics(t, cs, &log, tt.want)
			ids := hs.SessionIDs()
			if tt.stateless != (len(ids) == 0) {
				t.Errorf("stateless=%v but session ids %q", tt.stateless, ids)
			}
			if tt.stateless != (cs.ID() == "") {
				t.Errorf("stateless=%v but client session id %q", tt.stateless, cs.ID())
			}
			if testing.Verbose() {
				for _, r := range hs.Requests() {
					t.Logf("%s %s session=%q version=%q", r.Method, r.RPCMethod, r.SessionID, r.Header.Get("Mcp-Protocol-Version"))
				}
			}
		})
	}
}

func TestSSE(t *testing.T) {
	t.Parallel()
	// SSE is handshake-only in go-sdk: even a Modern server negotiates
	// 2025-11-25 over it.
	for _, e := range eras {
		t.Run(e.era.String(), func(t *testing.T) {
			url := ServeSSE(t, New(Options{Era: e.era}))
			var log progressLog
			cs := connect(t, &mcp.SSEClientTransport{Endpoint: url}, &log)
			checkBasics(t, cs, &log, LegacyVersion)
		})
	}
}

func TestProcessHTTP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		tr   func(url string) mcp.Transport
		want string
	}{
		{"modern/stateless", []string{"-transport", "http", "-stateless"},
			func(u string) mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: u} }, ModernVersion},
		{"legacy/stateful", []string{"-transport", "http", "-era", "legacy"},
			func(u string) mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: u} }, LegacyVersion},
		{"modern/sse", []string{"-transport", "sse"},
			func(u string) mcp.Transport { return &mcp.SSEClientTransport{Endpoint: u} }, LegacyVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := StartProcess(t, tt.args...)
			var log progressLog
			cs := connect(t, tt.tr(p.URL), &log)
			checkBasics(t, cs, &log, tt.want)
		})
	}
}

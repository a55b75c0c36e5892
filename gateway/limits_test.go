package gateway

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestConfigTimeoutBoundsCalls: a config entry's "timeout" and a tool's
// own "timeout" bound the calls the gateway forwards to that server.
func TestConfigTimeoutBoundsCalls(t *testing.T) {
	for _, era := range []testserver.Era{testserver.Legacy, testserver.Modern} {
		up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "up", Era: era}))
		for _, entry := range []string{`"timeout": "300ms"`, `"tools": {"slow": {"timeout": "300ms"}}`} {
			t.Run(fmt.Sprintf("%v/%s", era, entry), func(t *testing.T) {
				cfg, err := mcpadapter.ParseConfig([]byte(fmt.Sprintf(`{"mcpServers": {"up": {"url": %q, %s}}}`, up.URL, entry)))
				if err != nil {
					t.Fatal(err)
				}
				_, url := startGateway(t, FromConfig(cfg), nil)
				cs := connect(t, url, v1125, nil)
				res, err := cs.CallTool(testCtx(t, 20*time.Second), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 8000}})
				if err == nil && !res.IsError {
					t.Fatalf("a call of 8 s under a 300 ms timeout succeeded: %s", texts(res))
				}
				msg := fmt.Sprint(err)
				if err == nil {
					msg = texts(res)
				}
				if !strings.Contains(msg, "300ms") && !strings.Contains(strings.ToLower(msg), "timed out") {
					t.Fatalf("the error does not say the call timed out: %s", msg)
				}
			})
		}
	}
}

// gatewayFor starts a gateway in front of the server at url with the
// config entry's extra members, and connects a 2025-11-25 client to it.
func gatewayFor(t *testing.T, url, extra string) *mcp.ClientSession {
	t.Helper()
	cfg, err := mcpadapter.ParseConfig([]byte(fmt.Sprintf(`{"mcpServers": {"up": {"url": %q %s}}}`, url, extra)))
	if err != nil {
		t.Fatal(err)
	}
	_, gw := startGateway(t, FromConfig(cfg), nil)
	return connect(t, gw, v1125, nil)
}

// TestConfigTimeoutRestartsOnProgress: with "resetTimeoutOnProgress" a
// call that reports progress more often than its "timeout" runs past
// it; without, the timeout ends it; "maxTotalTimeout" ends it whatever
// the progress.
func TestConfigTimeoutRestartsOnProgress(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "up", Era: testserver.Legacy}))
	// 300 steps of 10 ms: about 3 s, a progress report every 10 ms.
	long := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 300}}
	for _, tc := range []struct {
		name, extra, wantErr string
	}{
		{"reset", `, "timeout": "2s", "resetTimeoutOnProgress": true`, ""},
		{"no reset", `, "timeout": "2s"`, "did not answer within 2s"},
		{"total", `, "timeout": "2s", "resetTimeoutOnProgress": true, "maxTotalTimeout": "1s"`, "ran longer than 1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := gatewayFor(t, up.URL, tc.extra)
			res, err := cs.CallTool(testCtx(t, 30*time.Second), long)
			switch {
			case tc.wantErr == "" && (err != nil || res.IsError):
				t.Fatalf("the call failed: %v %s", err, texts(res))
			case tc.wantErr == "" && texts(res) != "done":
				t.Fatalf("result %q, want done", texts(res))
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("got %v (%s), want an error saying %q", err, texts(res), tc.wantErr)
			}
		})
	}
}

// TestConfigMaxConcurrentCalls: a config entry's "maxConcurrentCalls",
// or the gateway's MaxCallsPerServer when smaller, caps the calls the
// gateway has in flight to that server, whichever clients make them;
// without either the same calls overlap.
func TestConfigMaxConcurrentCalls(t *testing.T) {
	for _, tc := range []struct {
		name, extra string
		perServer   int  // Options.MaxCallsPerServer
		bare        bool // a Server of a URL alone, no config entry
		overlap     bool
	}{
		{"capped", `, "maxConcurrentCalls": 1`, 0, false, false},
		{"uncapped", ``, 0, false, true},
		// The smaller cap wins: the gateway's, also under a larger one
		// of the config entry's, and for a server with no entry.
		{"gateway cap", ``, 1, false, false},
		{"gateway cap under the entry's", `, "maxConcurrentCalls": 3`, 1, false, false},
		{"gateway cap of a bare server", ``, 1, true, false},
		{"bare server uncapped", ``, 0, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A 2026-07-28 server: handshake-era calls of clients that may be asked
			// questions take turns anyway (lane.go).
			srv, st := testserver.NewWithState(testserver.Options{Name: "up", OneCallAtATime: true})
			up := testserver.StartStreamable(t, srv, testserver.Stateless())
			cfg, err := mcpadapter.ParseConfig([]byte(fmt.Sprintf(`{"mcpServers": {"up": {"url": %q %s}}}`, up.URL, tc.extra)))
			if err != nil {
				t.Fatal(err)
			}
			servers := FromConfig(cfg)
			if tc.bare {
				servers = []Server{{Name: "up", Target: up.URL}}
			}
			_, gw := startGateway(t, servers, &Options{MaxCallsPerServer: tc.perServer})
			const clients = 4
			sessions := make([]*mcp.ClientSession, clients)
			for i := range sessions {
				sessions[i] = connect(t, gw, v1125, nil)
			}
			ctx := testCtx(t, 30*time.Second)
			errs := make(chan error, clients)
			busy := make(chan bool, clients)
			for _, cs := range sessions {
				go func() {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 300}})
					busy <- err == nil && res.IsError && strings.HasPrefix(texts(res), testserver.BusyMessage)
					errs <- err
				}()
			}
			refused := 0
			for range clients {
				if err := <-errs; err != nil {
					t.Errorf("call: %v", err)
				}
				if <-busy {
					refused++
				}
			}
			if overlapped := st.Overlaps() > 0; overlapped != tc.overlap {
				t.Fatalf("calls overlapped at the server: %v (%d refused as busy, at most %d at once), want %v", overlapped, refused, st.MaxInFlight(), tc.overlap)
			}
		})
	}
}

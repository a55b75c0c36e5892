package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// callsAtOnce makes a slow call of ms milliseconds, waits until the server
// has it, then makes more calls of slow (50 ms) at once; it returns every
// call's result text (an error as "error: ...").
func callsAtOnce(t *testing.T, ctx context.Context, c *mcpadapter.Client, st *testserver.State, ms, more int) []string {
	t.Helper()
	out := make([]string, more+1)
	var wg sync.WaitGroup
	call := func(i, ms int) {
		res, err := c.CallTool(ctx, "slow", json.RawMessage(fmt.Sprintf(`{"ms":%d}`, ms)), nil)
		switch {
		case err != nil:
			out[i] = "error: " + err.Error()
		default:
			out[i] = res.Text()
		}
	}
	wg.Go(func() { call(0, ms) })
	if err := st.Wait(ctx, func(s *testserver.State) bool { return s.Calls("slow") >= 1 }); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= more; i++ {
		wg.Go(func() { call(i, 50) })
	}
	wg.Wait()
	return out
}

// TestMaxConcurrentCalls: a server that handles one call at a time
// refuses the calls an agent makes at once; with MaxConcurrentCalls: 1 the
// client queues them and every call succeeds.
func TestMaxConcurrentCalls(t *testing.T) {
	for _, e := range eras {
		t.Run(e.era.String(), func(t *testing.T) {
			ctx := testCtx(t)
			srv, st := testserver.NewWithState(testserver.Options{Era: e.era, OneCallAtATime: true})

			open, err := mcpadapter.NewClient(srv, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer open.Close()
			got := callsAtOnce(t, ctx, open, st, 1000, 3)
			busy := 0
			for _, g := range got {
				if strings.HasPrefix(g, testserver.BusyMessage) {
					busy++
				}
			}
			if busy != 3 || st.Overlaps() != 3 {
				t.Fatalf("without a cap: %d busy results, %d overlaps, want 3: %q", busy, st.Overlaps(), got)
			}

			srv, st = testserver.NewWithState(testserver.Options{Era: e.era, OneCallAtATime: true})
			capped, err := mcpadapter.NewClient(srv, &mcpadapter.ClientOptions{MaxConcurrentCalls: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer capped.Close()
			got = callsAtOnce(t, ctx, capped, st, 300, 3)
			for i, g := range got {
				if want := []string{"slept 300ms", "slept 50ms"}[min(i, 1)]; g != want {
					t.Errorf("call %d with a cap of 1: %q, want %q", i, g, want)
				}
			}
			if st.Overlaps() != 0 || st.MaxInFlight() != 1 || st.Calls("slow") != 4 {
				t.Errorf("with a cap of 1 the server saw %d overlaps, %d calls at once, %d calls", st.Overlaps(), st.MaxInFlight(), st.Calls("slow"))
			}
		})
	}
}

// TestMaxConcurrentCallsQueueHonoursContext: a call waiting for a slot
// ends with its own context (deadline or cancellation), is never sent, and
// leaves nothing behind.
func TestMaxConcurrentCallsQueueHonoursContext(t *testing.T) {
	ctx := testCtx(t)
	before := runtime.NumGoroutine()
	srv, st := testserver.NewWithState(testserver.Options{OneCallAtATime: true})
	c, err := mcpadapter.NewClient(srv, &mcpadapter.ClientOptions{Name: "single", MaxConcurrentCalls: 1})
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan string, 1)
	go func() {
		res, err := c.CallTool(ctx, "slow", json.RawMessage(`{"ms":1500}`), nil)
		if err != nil {
			first <- err.Error()
			return
		}
		first <- res.Text()
	}()
	if err := st.Wait(ctx, func(s *testserver.State) bool { return s.Calls("slow") == 1 }); err != nil {
		t.Fatal(err)
	}

	dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = c.CallTool(dctx, "echo", json.RawMessage(`{"text":"late"}`), nil)
	var te *mcpadapter.TransportError
	if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) || te.Server != "single" || te.Tool != "echo" ||
		!strings.Contains(err.Error(), "MaxConcurrentCalls") {
		t.Errorf("queued past its deadline: %v", err)
	}

	cctx, cancelNow := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(cctx, "echo", json.RawMessage(`{"text":"cancelled"}`), nil)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond) // let it queue; it must not matter if it has not
	cancelNow()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("queued and cancelled: %v", err)
	}

	if got := <-first; got != "slept 1500ms" {
		t.Errorf("the call in flight: %q", got)
	}
	if n := st.Calls("echo"); n != 0 {
		t.Errorf("the server got %d of the calls that ended while queued", n)
	}
	// The slot is free again.
	if res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"next"}`), nil); err != nil || res.Text() != "next" {
		t.Fatalf("after the queue emptied: %v %+v", err, res)
	}
	c.Close()
	testenv.WaitGoroutines(t, before)
}

// TestMaxConcurrentCallsConfig: "maxConcurrentCalls" in a config caps one
// stdio server (a real process that handles one call at a time); its
// neighbour without the cap gets the calls at once and refuses some.
func TestMaxConcurrentCallsConfig(t *testing.T) {
	ctx := testCtx(t)
	cfg := parseConfig(t, `{"mcpServers": {
		"capped": {"command": "${BIN}", "args": ["-one-at-a-time"], "maxConcurrentCalls": 1},
		"open":   {"command": "${BIN}", "args": ["-one-at-a-time"]}
	}}`, map[string]string{"BIN": testserver.Build(t)})
	if cfg.Servers[0].MaxConcurrentCalls != 1 || cfg.Servers[1].MaxConcurrentCalls != 0 {
		t.Fatalf("parsed maxConcurrentCalls: %d, %d", cfg.Servers[0].MaxConcurrentCalls, cfg.Servers[1].MaxConcurrentCalls)
	}
	a, err := mcpadapter.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools := toolMap(t, ctx, a)
	busy := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, server := range []string{"capped", "open"} {
		for range 4 {
			wg.Go(func() {
				res, err := tools[server+"_slow"].Call(ctx, json.RawMessage(`{"ms":500}`))
				if err != nil {
					t.Errorf("%s: %v", server, err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if res.IsError {
					if !strings.HasPrefix(res.Text(), testserver.BusyMessage) {
						t.Errorf("%s: %q", server, res.Text())
					}
					busy[server]++
				}
			})
		}
	}
	wg.Wait()
	t.Logf("4 calls of 500 ms at once to each server: busy results %v", busy)
	if busy["capped"] != 0 || busy["open"] == 0 {
		t.Errorf("busy results: %v; want none from capped and some from open", busy)
	}
}

func TestMaxConcurrentCallsNegative(t *testing.T) {
	_, err := mcpadapter.NewClient(testserver.New(testserver.Options{}), &mcpadapter.ClientOptions{MaxConcurrentCalls: -1})
	if err == nil || !strings.Contains(err.Error(), "MaxConcurrentCalls") {
		t.Errorf("NewClient: %v", err)
	}
	cfg := parseConfig(t, `{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}}`, nil)
	if _, err := mcpadapter.NewGroup(cfg, &mcpadapter.ClientOptions{MaxConcurrentCalls: -2}); err == nil || !strings.Contains(err.Error(), "MaxConcurrentCalls") {
		t.Errorf("NewGroup: %v", err)
	}
	cfg.Servers[1].MaxConcurrentCalls = -1
	var ce *mcpadapter.ConfigError
	if _, err := mcpadapter.NewGroup(cfg, nil); !errors.As(err, &ce) || ce.Path != "mcpServers.b.maxConcurrentCalls" {
		t.Errorf("NewGroup with a negative ServerConfig.MaxConcurrentCalls: %v", err)
	}
}

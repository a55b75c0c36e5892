package gateway

import (
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReloadDuringStart: a Reload that comes while Start is still
// connecting the first servers (a SIGHUP at start-up, a library caller
// that reloads from another goroutine) removes a server Start is bringing
// up without hanging either of them: Start returns, Reload returns, and
// the servers are the new config's.
func TestReloadDuringStart(t *testing.T) {
	a := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "a"}), testserver.Stateless())
	b := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "b"}), testserver.Stateless())
	c := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "c"}), testserver.Stateless())
	for i := range 5 {
		g, err := New([]Server{{Name: "a", Target: a.URL}, {Name: "b", Target: b.URL}}, &Options{Logger: quietLogger(t), Prefix: mcpadapter.PrefixAlways})
		if err != nil {
			t.Fatal(err)
		}
		started := make(chan error, 1)
		go func() { started <- g.Start(testCtx(t, 20*time.Second)) }()
		for !g.started.Load() {
			time.Sleep(time.Microsecond)
		}
		reloaded := make(chan error, 1)
		go func() {
			reloaded <- g.Reload(testCtx(t, 20*time.Second), []Server{{Name: "a", Target: a.URL}, {Name: "c", Target: c.URL}})
		}()
		for what, ch := range map[string]chan error{"Start": started, "Reload": reloaded} {
			select {
			case err := <-ch:
				if err != nil {
					t.Fatalf("round %d: %s: %v", i, what, err)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("round %d: %s has not returned after 30 s", i, what)
			}
		}
		var names []string
		for _, st := range g.Servers() {
			names = append(names, st.Name)
		}
		if got := strings.Join(names, ","); got != "a,c" {
			t.Errorf("round %d: servers after the reload: %s", i, got)
		}
		if err := g.Close(); err != nil {
			t.Errorf("round %d: Close: %v", i, err)
		}
	}
}

// TestReloadRefusedSecretsNeverShown: a new config that is refused
// because an entry cannot be built does not show that entry's secrets in
// the error (which serve prints and logs): they are blanked out like
// those of the entries the gateway runs.
func TestReloadRefusedSecretsNeverShown(t *testing.T) {
	a := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "a"}), testserver.Stateless())
	g, _ := startGateway(t, []Server{{Name: "a", Target: a.URL}}, nil)
	const secret = "reload-url-password-5521"
	// A library caller's entry: the config parser would refuse the URL
	// before the gateway sees it.
	bad := []Server{{Name: "a", Target: a.URL}, {Name: "files", Config: &mcpadapter.ServerConfig{Name: "files", Transport: "http", URL: "ftp://deploy:" + secret + "@files.example/"}}}
	err := g.Reload(testCtx(t, 20*time.Second), bad)
	if err == nil {
		t.Fatal("a config with an ftp URL was taken")
	}
	if !strings.Contains(err.Error(), "files") {
		t.Errorf("the refusal does not name the entry: %v", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("the refusal shows the entry's password: %v", err)
	}
}

// TestReloadLeavesNoGoroutines: servers added and removed again by
// Reload, stdio ones included, and refused reloads, leave no goroutine
// of theirs behind (nor a process: the stdio child's pid ends).
func TestReloadLeavesNoGoroutines(t *testing.T) {
	a := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "a"}), testserver.Stateless())
	b := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "b", Era: testserver.Legacy}))
	bin := testserver.Build(t)
	kid := Server{Name: "kid", Target: mcpadapter.Command{Path: bin, Args: []string{"-era", "legacy", "-name", "kid"}}}
	base := []Server{{Name: "a", Target: a.URL}}
	g, url := startGateway(t, base, &Options{Prefix: mcpadapter.PrefixAlways})
	cs := connect(t, url, v1125, nil)
	ctx := testCtx(t, 2*time.Minute)
	round := func() {
		if err := g.Reload(ctx, []Server{base[0], {Name: "b", Target: b.URL}, kid}); err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "kid_pid", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		pid, _ := strconv.Atoi(texts(res))
		if err := g.Reload(ctx, []Server{base[0], {Name: "bad name!", Target: b.URL}}); err == nil {
			t.Fatal("a bad name was taken")
		}
		if err := g.Reload(ctx, base); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "the removed stdio server's process to end", func() bool { return !alive(pid) })
	}
	round()
	http.DefaultClient.CloseIdleConnections()
	before := settleGoroutines(0)
	for range 3 {
		round()
	}
	http.DefaultClient.CloseIdleConnections()
	if after := settleGoroutines(before); after > before {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines after 3 rounds of reloads, %d before:\n%s", after, before, buf[:runtime.Stack(buf, true)])
	}
}

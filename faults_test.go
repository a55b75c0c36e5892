package mcpadapter_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

func TestFaultServerCrashMidCall(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c, err := mcpadapter.NewClient(stdioServer(t, "-stderr", "60"), &mcpadapter.ClientOptions{Name: "crashy"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.CallTool(ctx, "crash", nil, nil)
	var te *mcpadapter.TransportError
	var pe *mcpadapter.ProcessExitError
	if !errors.As(err, &te) || !errors.As(err, &pe) {
		t.Fatalf("crash: %v (%T), want a TransportError wrapping a ProcessExitError", err, err)
	}
	if te.Server != "crashy" || te.Tool != "crash" || pe.ExitCode != testserver.CrashExitCode {
		t.Errorf("error fields: server %q tool %q exit %d", te.Server, te.Tool, pe.ExitCode)
	}
	if len(te.Stderr) != 50 || te.Stderr[len(te.Stderr)-1] != testserver.CrashMessage || te.Stderr[0] != "stderr line 12" {
		t.Errorf("stderr tail: %d lines, %q ... %q", len(te.Stderr), te.Stderr[0], te.Stderr[len(te.Stderr)-1])
	}
	if !strings.Contains(err.Error(), testserver.CrashMessage) || !strings.Contains(err.Error(), `"crashy"`) {
		t.Errorf("message lacks the server name or its last words:\n%v", err)
	}
	// The next call starts the server again.
	res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"back"}`), nil)
	if err != nil || res.Text() != "back" {
		t.Fatalf("after the crash: %v %+v", err, res)
	}
}

func TestFaultStdoutPollution(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	var logs syncBuffer
	c, err := mcpadapter.NewClient(stdioServer(t, "-pollute"), &mcpadapter.ClientOptions{
		Name:   "noisy",
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"still works"}`), nil)
	if err != nil || res.Text() != "still works" {
		t.Fatalf("polluted server: %v %+v", err, res)
	}
	if out := logs.String(); !strings.Contains(out, "server=noisy") || !strings.Contains(out, testserver.PolluteBanner) {
		t.Errorf("no warning naming the server and quoting the line:\n%s", out)
	}
}

func TestFaultNotAnMCPServer(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	start := time.Now()
	c, err := mcpadapter.NewClient(mcpadapter.Command{Path: "sh", Args: []string{"-c", "echo 'Welcome to my tool v1'; exec sleep 60"}},
		&mcpadapter.ClientOptions{Name: "notmcp", ConnectTimeout: time.Second, ProbeTimeout: 200 * time.Millisecond, StopTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Tools(ctx)
	var se *mcpadapter.StdoutError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "Welcome to my tool v1") || !strings.Contains(err.Error(), `"notmcp"`) {
		t.Fatalf("got %v, want an error naming the server and quoting the stdout line", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestFaultHungHandshake(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	start := time.Now()
	c, err := mcpadapter.NewClient(stdioServer(t, "-hang"),
		&mcpadapter.ClientOptions{ConnectTimeout: time.Second, ProbeTimeout: 200 * time.Millisecond, StopTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Tools(ctx)
	var te *mcpadapter.TransportError
	if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) || te.Op != "initialize" || !strings.Contains(err.Error(), "no answer to initialize") {
		t.Fatalf("got %v, want a deadline error saying initialize hung", err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("hung handshake took %v to fail with a 1s timeout", d)
	}
}

func TestFaultDiscoverIgnoredOrFatal(t *testing.T) {
	t.Parallel()
	for _, flag := range []string{"-ignore-discover", "-exit-on-discover"} {
		t.Run(flag, func(t *testing.T) {
			ctx := testCtx(t)
			c, err := mcpadapter.NewClient(stdioServer(t, flag, "-era", "legacy"), &mcpadapter.ClientOptions{ProbeTimeout: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			info, err := c.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if info.Era != mcpadapter.EraHandshake {
				t.Errorf("era %v", info.Era)
			}
			res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"ok"}`), nil)
			if err != nil || res.Text() != "ok" {
				t.Fatalf("%v %+v", err, res)
			}
		})
	}
}

func TestFaultCloseWithCallsInFlight(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target func(t *testing.T) any
	}{
		{"stdio", func(t *testing.T) any { return stdioServer(t) }},
		{"in-process", func(t *testing.T) any { return testserver.New(testserver.Options{}) }},
		{"streamable", func(t *testing.T) any {
			return testserver.ServeStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := tc.target(t)
			ctx := testCtx(t)
			before := runtime.NumGoroutine()
			c, err := mcpadapter.NewClient(target, &mcpadapter.ClientOptions{StopTimeout: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Connect(ctx); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make([]error, 8)
			for i := range errs {
				wg.Go(func() { _, errs[i] = c.CallTool(ctx, "slow", json.RawMessage(`{"ms":3000}`), nil) })
			}
			time.Sleep(300 * time.Millisecond)
			start := time.Now()
			if err := c.Close(); err != nil {
				t.Logf("close: %v", err)
			}
			wg.Wait()
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("calls took %v to end after Close", d)
			}
			for i, err := range errs {
				var te *mcpadapter.TransportError
				if !errors.As(err, &te) {
					t.Errorf("call %d: %v, want a TransportError", i, err)
				}
			}
			// The servers run in this process too: a server may finish its
			// handlers (3 s) when go-sdk's cancellation notice lost the race
			// with the end of the session. Client goroutines never end by
			// themselves, so a leak still shows.
			testenv.WaitGoroutines(t, before)
		})
	}
}

// processGone reports whether pid has exited (a zombie counts as gone).
func processGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
}

func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) is still running", what, pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestFaultCloseKillsProcessGroup(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	ctx := testCtx(t)
	pids := make(chan int, 1)
	c, err := mcpadapter.NewClient(stdioServer(t, "-spawn-grandchild"), &mcpadapter.ClientOptions{
		StopTimeout: 200 * time.Millisecond,
		StderrHandler: func(_, line string) {
			var pid int
			if _, err := fmt.Sscanf(line, "grandchild pid %d", &pid); err == nil {
				pids <- pid
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	var grandchild int
	select {
	case grandchild = <-pids:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not report its child")
	}
	if processGone(grandchild) {
		t.Fatal("grandchild not running before Close")
	}
	c.Close()
	waitGone(t, grandchild, "the server's own child")
}

// TestFaultHostKilled kills -9 a process that runs a stdio server through
// the adapter, and checks that the server does not outlive it.
func TestFaultHostKilled(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("Pdeathsig is Linux-only")
	}
	if os.Getenv("MCPADAPTER_TEST_HOST") == "1" {
		runHost()
		return
	}
	host := exec.Command(os.Args[0], "-test.run=^TestFaultHostKilled$")
	host.Env = append(os.Environ(), "MCPADAPTER_TEST_HOST=1", "MCPTESTSERVER_BIN="+testserver.Build(t))
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	defer host.Process.Kill()
	server := 0
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "server pid "); ok {
			server, _ = strconv.Atoi(v)
			break
		}
	}
	if server == 0 {
		t.Fatal("host did not report its server")
	}
	if processGone(server) {
		t.Fatal("server not running before the kill")
	}
	if err := host.Process.Kill(); err != nil { // SIGKILL: no cleanup runs in the host
		t.Fatal(err)
	}
	_ = host.Wait()
	waitGone(t, server, "the server of a killed host")
}

// runHost is the body of the host process of TestFaultHostKilled.
func runHost() {
	ctx := context.Background()
	c, err := mcpadapter.NewClient(mcpadapter.Command{Path: os.Getenv("MCPTESTSERVER_BIN")}, &mcpadapter.ClientOptions{})
	if err != nil {
		panic(err)
	}
	if _, err := c.Connect(ctx); err != nil {
		panic(err)
	}
	children, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", os.Getpid(), os.Getpid()))
	if err != nil || len(strings.Fields(string(children))) == 0 {
		// The child may have been started from another thread.
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", os.Getpid()))
		for _, task := range tasks {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", os.Getpid(), task.Name()))
			children = append(children, b...)
		}
	}
	fmt.Printf("server pid %s\n", strings.Fields(string(children))[0])
	time.Sleep(time.Minute)
}

func TestFaultRequestTimeout(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv, state := testserver.NewWithState(testserver.Options{})
	c, err := mcpadapter.NewClient(srv, &mcpadapter.ClientOptions{Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, err = c.CallTool(ctx, "slow", json.RawMessage(`{"ms":5000}`), nil)
	var te *mcpadapter.TransportError
	if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) || te.Tool != "slow" {
		t.Fatalf("got %v, want a TransportError for slow wrapping DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("timed out after %v", d)
	}
	// The server is told, and the client is still usable.
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := state.Wait(wctx, func(s *testserver.State) bool { return s.Cancellations() > 0 }); err != nil {
		t.Errorf("the server never saw the cancellation: %v", err)
	}
	if res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"ok"}`), nil); err != nil || res.Text() != "ok" {
		t.Errorf("after a timeout: %v %+v", err, res)
	}
}

package mcpadapter_test

// Hostile stdio servers: a server that stops
// reading its stdin, floods the client with requests, answers with lines
// that cannot be decoded, or spams stdout. Each case is bounded in time
// (a call that never returns fails the test after a guard) and reports
// what it cost: a "HOSTILE" line with the time to return, the peak of
// goroutines and of the process's RSS, and what is left afterwards. See
// docs/dev/reliability.md.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// usage samples the goroutine count and reads the process's peak RSS while
// a hostile case runs.
type usage struct {
	stop, done chan struct{}
	goroutines atomic.Int64 // the highest count seen
	rssStart   int64        // kB
}

// watchUsage starts sampling; on Linux it resets the peak RSS (VmHWM).
func watchUsage() *usage {
	runtime.GC()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	u := &usage{stop: make(chan struct{}), done: make(chan struct{}), rssStart: procStatus("VmRSS")}
	u.goroutines.Store(int64(runtime.NumGoroutine()))
	go func() {
		defer close(u.done)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-u.stop:
				return
			case <-tick.C:
				if n := int64(runtime.NumGoroutine()); n > u.goroutines.Load() {
					u.goroutines.Store(n)
				}
			}
		}
	}()
	return u
}

// end stops sampling and returns the goroutine peak and how far the RSS
// peak rose above the RSS at the start, in MiB (-1 where unknown).
func (u *usage) end() (goroutines int, rssGrowMiB float64) {
	close(u.stop)
	<-u.done
	hwm := procStatus("VmHWM")
	if hwm < 0 || u.rssStart < 0 {
		return int(u.goroutines.Load()), -1
	}
	return int(u.goroutines.Load()), float64(hwm-u.rssStart) / 1024
}

// procStatus returns a kB field of /proc/self/status, or -1.
func procStatus(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err == nil {
				return n
			}
		}
	}
	return -1
}

// within runs fn and fails the test if it does not return within guard
// (then fn is left running: the test is failing anyway).
func within(t *testing.T, guard time.Duration, what string, fn func()) time.Duration {
	t.Helper()
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
		return time.Since(start)
	case <-time.After(guard):
		t.Fatalf("%s did not return within %v", what, guard)
		return 0
	}
}

// deafClient starts a client whose server stops reading its stdin once
// the tool stopAfter is called, calls it, and returns the client and the
// server's pid.
func deafClient(t *testing.T, ctx context.Context, name, stopAfter string, opts *mcpadapter.ClientOptions, flags ...string) *mcpadapter.Client {
	t.Helper()
	if opts == nil {
		opts = &mcpadapter.ClientOptions{}
	}
	opts.Name = name
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	if opts.StopTimeout == 0 {
		opts.StopTimeout = 200 * time.Millisecond
	}
	c, err := mcpadapter.NewClient(stdioServer(t, append([]string{"-stop-reading", stopAfter}, flags...)...), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// A server that stops reading its stdin: a call with a deadline and more
// arguments than the pipe holds returns at its deadline (it never
// returned); the line it left half written fails the connection, so the
// next call starts a new server.
func TestHostileStdinNotReadBigCall(t *testing.T) {
	ctx := testCtx(t)
	before := runtime.NumGoroutine()
	c := deafClient(t, ctx, "deaf", "pid", nil)
	pid := serverPID(t, ctx, c) // from now on the server never reads stdin
	args, _ := json.Marshal(map[string]string{"text": strings.Repeat("a", 256<<10)})
	var err error
	d := within(t, 15*time.Second, "a call with a 1 s deadline to a server that does not read", func() {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err = c.CallTool(cctx, "echo", args, nil)
	})
	var te *mcpadapter.TransportError
	if !errors.As(err, &te) || te.Tool != "echo" || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("after %v: %v (%T), want a TransportError for echo wrapping DeadlineExceeded", d, err, err)
	}
	t.Logf("256 KiB call, 1 s deadline: returned after %v: %v", d.Round(time.Millisecond), err)
	// The half-written line ended the connection: a new server answers.
	echoOK(t, ctx, c, "new server")
	if got := serverPID(t, ctx, c); got == pid {
		t.Errorf("still the server %d that got half a line", pid)
	}
	waitGone(t, pid, "the server that got half a line")
	start := time.Now()
	_ = c.Close()
	closeTook := time.Since(start)
	testenv.WaitGoroutines(t, before)
	t.Logf("HOSTILE stdin-not-read big_call_returned_ms=%d close_ms=%d goroutines_left=%d processes_left=0",
		d.Milliseconds(), closeTook.Milliseconds(), runtime.NumGoroutine()-before)
}

// Small calls to a server that does not read fill its stdin pipe; every
// call still returns at its deadline, and Close ends the server (whose
// pipe stays full and which ignores SIGTERM) and a call that has no
// deadline, blocked writing: nothing is left running.
func TestHostileStdinNotReadSmallCallsAndClose(t *testing.T) {
	const calls = 1500 // about 160 KB of requests: more than the pipe holds
	ctx := testCtx(t)
	before := runtime.NumGoroutine()
	c := deafClient(t, ctx, "deaf", "pid", nil, "-ignore-sigterm")
	pid := serverPID(t, ctx, c)
	u := watchUsage()
	var failed, late, other atomic.Int64
	var slowest atomic.Int64
	within(t, 30*time.Second, fmt.Sprintf("%d small calls with a 1 s deadline", calls), func() {
		var wg sync.WaitGroup
		for i := range calls {
			wg.Go(func() {
				cctx, cancel := context.WithTimeout(ctx, time.Second)
				defer cancel()
				start := time.Now()
				_, err := c.CallTool(cctx, "echo", json.RawMessage(`{"text":"call `+strconv.Itoa(i)+`"}`), nil)
				d := time.Since(start)
				if d.Milliseconds() > slowest.Load() {
					slowest.Store(d.Milliseconds())
				}
				if errors.Is(err, context.DeadlineExceeded) {
					failed.Add(1)
				} else if other.Add(1) <= 3 {
					t.Logf("call %d: %v", i, err)
				}
				if d > 10*time.Second { // a hang guard, not a speed check
					late.Add(1)
				}
			})
		}
		wg.Wait()
	})
	if failed.Load() != calls || late.Load() > 0 {
		t.Errorf("%d of %d calls failed with DeadlineExceeded, %d returned more than 10 s after they started", failed.Load(), calls, late.Load())
	}
	// A call without a deadline waits to write (or is blocked writing);
	// Close ends it.
	blocked := make(chan error, 1)
	go func() {
		_, err := c.CallTool(context.WithoutCancel(ctx), "echo", json.RawMessage(`{"text":"no deadline"}`), nil)
		blocked <- err
	}()
	time.Sleep(200 * time.Millisecond)
	closeTook := within(t, 15*time.Second, "Close", func() { _ = c.Close() })
	if !processGone(pid) {
		t.Errorf("the server %d is still running when Close returns", pid)
	}
	select {
	case err := <-blocked:
		var te *mcpadapter.TransportError
		if !errors.As(err, &te) {
			t.Errorf("the call blocked in its write: %v, want a TransportError", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call blocked in its write did not return after Close")
	}
	goroutines, rss := u.end()
	testenv.WaitGoroutines(t, before)
	t.Logf("HOSTILE stdin-not-read calls=%d slowest_ms=%d close_ms=%d peak_goroutines=%d peak_rss_growth_mib=%.1f goroutines_left=%d processes_left=0",
		calls, slowest.Load(), closeTook.Milliseconds(), goroutines, rss, runtime.NumGoroutine()-before)
}

// 200,000 ping requests from a server that never reads its stdin: the
// client holds at most stdio.MaxHeldRequests of them while it answers
// them, then closes the connection with an error that says why; a call
// with a 2 s deadline made meanwhile returns within it; the next call gets
// a new server; nothing is left after Close.
func TestHostilePingFlood(t *testing.T) {
	const pings = 200_000
	ctx := testCtx(t)
	before := runtime.NumGoroutine()
	c := deafClient(t, ctx, "pinger", "ping_flood", nil)
	pid := serverPID(t, ctx, c)
	u := watchUsage()
	var floodErr, callErr error
	var callTook time.Duration
	floodTook := within(t, 60*time.Second, "the ping flood", func() {
		var wg sync.WaitGroup
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			_, floodErr = c.CallTool(cctx, "ping_flood", json.RawMessage(fmt.Sprintf(`{"n":%d}`, pings)), nil)
		})
		wg.Go(func() {
			time.Sleep(50 * time.Millisecond)
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			start := time.Now()
			_, callErr = c.CallTool(cctx, "echo", json.RawMessage(`{"text":"during the flood"}`), nil)
			callTook = time.Since(start)
		})
		wg.Wait()
	})
	goroutines, rss := u.end()
	var over *stdio.OverloadError
	if !errors.As(floodErr, &over) || over.Limit != stdio.MaxHeldRequests {
		t.Errorf("ping_flood: %v, want a TransportError wrapping a *stdio.OverloadError", floodErr)
	}
	// It fails at its deadline, or with the connection; or, never sent
	// before the connection ended, it is sent again to a new server.
	if callErr != nil && !errors.Is(callErr, context.DeadlineExceeded) && !errors.As(callErr, &over) {
		t.Errorf("a call with a 2 s deadline during the flood: %v, want its answer, its deadline or the flood's *stdio.OverloadError", callErr)
	}
	t.Logf("flood: %v\ncall during it (%v): %v", floodErr, callTook.Round(time.Millisecond), callErr)
	if goroutines > 3*stdio.MaxHeldRequests || (rss >= 0 && rss > 256) {
		t.Errorf("the flood cost %d goroutines and %.0f MiB of RSS; want them bounded by the %d requests held", goroutines, rss, stdio.MaxHeldRequests)
	}
	echoOK(t, ctx, c, "after the flood")
	closeTook := within(t, 15*time.Second, "Close", func() { _ = c.Close() })
	if !processGone(pid) {
		t.Errorf("the flooding server %d is still running", pid)
	}
	testenv.WaitGoroutines(t, before)
	t.Logf("HOSTILE ping-flood pings=%d flood_call_returned_ms=%d deadline_call_returned_ms=%d peak_goroutines=%d peak_rss_growth_mib=%.1f close_ms=%d goroutines_left=%d processes_left=0",
		pings, floodTook.Milliseconds(), callTook.Milliseconds(), goroutines, rss, closeTook.Milliseconds(), runtime.NumGoroutine()-before)
}

// countingHandler is a slog.Handler that keeps its records' messages and
// attributes.
type countingHandler struct {
	mu      sync.Mutex
	records []map[string]string
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *countingHandler) WithGroup(string) slog.Handler            { return h }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	m := map[string]string{"msg": r.Message, "level": r.Level.String()}
	r.Attrs(func(a slog.Attr) bool {
		m[a.Key] = a.Value.String()
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, m)
	return nil
}

func (h *countingHandler) all() []map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]string(nil), h.records...)
}

// Responses that cannot be decoded (NaN, a truncated line, nesting 5,000
// deep, with the id first or last) fail their call at once, saying what
// was wrong and not blaming stdout logging; the connection goes on.
func TestHostileUndecodableResponses(t *testing.T) {
	ctx := testCtx(t)
	logs := &countingHandler{}
	c, err := mcpadapter.NewClient(stdioServer(t), &mcpadapter.ClientOptions{Name: "garbler", Logger: slog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pid := serverPID(t, ctx, c)
	for _, tc := range []struct{ kind, want string }{
		{testserver.BadNaN, "invalid character 'N'"},
		{testserver.BadNaNIDLast, "invalid character 'N'"},
		{testserver.BadTruncated, "ends before"},
		{testserver.BadDeep, "nests deeper than"},
	} {
		var res *mcpadapter.Result
		var err error
		d := within(t, 15*time.Second, tc.kind, func() {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			res, err = c.CallTool(cctx, "bad_response", json.RawMessage(`{"kind":"`+tc.kind+`"}`), nil)
		})
		if err != nil {
			t.Errorf("%s: %v, want an error result", tc.kind, err)
			continue
		}
		text := res.Text()
		if !res.IsError || !strings.Contains(text, tc.want) || !strings.Contains(text, "could not be decoded") {
			t.Errorf("%s: %q (IsError %v), want an error result saying %q", tc.kind, text, res.IsError, tc.want)
		}
		if strings.Contains(text, "stderr") || strings.Contains(text, "non-JSON") {
			t.Errorf("%s: %q blames stdout logging", tc.kind, text)
		}
		if d > 5*time.Second {
			t.Errorf("%s: returned after %v, want at once", tc.kind, d)
		}
		t.Logf("HOSTILE undecodable kind=%s returned_ms=%d result=%q", tc.kind, d.Milliseconds(), text)
	}
	echoOK(t, ctx, c, "after the bad responses")
	if got := serverPID(t, ctx, c); got != pid {
		t.Errorf("the connection was replaced (pid %d, then %d)", pid, got)
	}
	for _, r := range logs.all() {
		if strings.Contains(r["msg"], "stderr") {
			t.Errorf("logged as stray output: %v", r)
		}
	}
}

// A tool list whose input schema nests 5,000 deep fails at once, saying so.
func TestHostileDeepInputSchema(t *testing.T) {
	ctx := testCtx(t)
	c, err := mcpadapter.NewClient(stdioServer(t, "-deep-schema"), &mcpadapter.ClientOptions{Name: "deep", Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var lerr error
	d := within(t, 15*time.Second, "tools/list", func() {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, lerr = c.Tools(cctx)
	})
	if lerr == nil || !strings.Contains(lerr.Error(), "nests deeper than") || strings.Contains(lerr.Error(), "stderr") {
		t.Fatalf("tools/list after %v: %v, want an error saying the response nests too deep", d, lerr)
	}
	if d > 5*time.Second {
		t.Errorf("returned after %v, want at once", d)
	}
	t.Logf("HOSTILE deep-schema returned_ms=%d error=%q", d.Milliseconds(), lerr)
	echoOK(t, ctx, c, "the connection goes on")
}

// 1,000,000 non-JSON lines on stdout make a few log records, not a million:
// the first lines one by one, then one summary per interval with the count;
// every line is accounted for, and the last ones are in the error of a
// later failure.
func TestHostileStdoutSpam(t *testing.T) {
	const lines = 1_000_000
	ctx := testCtx(t)
	logs := &countingHandler{}
	c, err := mcpadapter.NewClient(stdioServer(t), &mcpadapter.ClientOptions{Name: "spammer", Logger: slog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	u := watchUsage()
	var res *mcpadapter.Result
	d := within(t, 120*time.Second, "the spam call", func() {
		res, err = c.CallTool(ctx, "spam", json.RawMessage(fmt.Sprintf(`{"n":%d}`, lines)), nil)
	})
	goroutines, rss := u.end()
	if err != nil || res.IsError {
		t.Fatalf("spam: %v %+v", err, res)
	}
	// A later failure shows the last lines.
	_, err = c.CallTool(ctx, "crash", nil, nil)
	var se *mcpadapter.StdoutError
	if !errors.As(err, &se) || len(se.Lines) == 0 || se.Lines[len(se.Lines)-1] != testserver.SpamLine(lines-1) {
		t.Errorf("crash after the spam: %v, want a StdoutError ending with %q", err, testserver.SpamLine(lines-1))
	}
	_ = c.Close()
	var one, summaries, counted int
	for _, r := range logs.all() {
		switch {
		case r["skipped"] != "":
			n, _ := strconv.Atoi(r["skipped"])
			summaries++
			counted += n
		case strings.Contains(r["msg"], "non-JSON"):
			one++
		}
	}
	if one+counted != lines {
		t.Errorf("%d lines logged one by one and %d in %d summaries: want %d in all", one, counted, summaries, lines)
	}
	if one+summaries > 30 {
		t.Errorf("%d log records for %d stray lines, want a few", one+summaries, lines)
	}
	t.Logf("HOSTILE stdout-spam lines=%d took_ms=%d log_records=%d (one_by_one=%d summaries=%d) peak_goroutines=%d peak_rss_growth_mib=%.1f",
		lines, d.Milliseconds(), one+summaries, one, summaries, goroutines, rss)
	if testing.Verbose() {
		var b bytes.Buffer
		for _, r := range logs.all() {
			fmt.Fprintln(&b, r)
		}
		t.Logf("records:\n%.3000s", b.String())
	}
}

// A stderr line over 64 KiB does not stop the client draining stderr (the
// server would block writing to it).
func TestLongStderrLine(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _ := mcpadapter.NewClient(stdioServer(t, "-noisy"), &mcpadapter.ClientOptions{})
	defer c.Close()
	for range 3 {
		if res, err := c.CallTool(ctx, "echo", []byte(`{"text":"ok"}`), nil); err != nil || res.Text() != "ok" {
			t.Fatalf("%v %+v", err, res)
		}
	}
}

package mcpadapter_test

// Hostile servers: a stdio server that misbehaves on purpose (the
// mcptestserver command's -never-answer, -garbage, -wrong-ids, -flood and
// -grandchild-holds-stdout flags and its pid, big and close_stdout tools).
// Each test checks what the caller sees, that it sees it in bounded time,
// that memory stays bounded, and that the connection (or a new one) is
// usable afterwards. See docs/dev/reliability.md (each case with its measured
// outcome, and "Bugs found" for the defects these tests found).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const mib = 1 << 20

// quietLogger discards the client's logs (stray-line warnings by the
// thousand would drown the test output).
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// serverPID asks the stdio test server for its process id.
func serverPID(t *testing.T, ctx context.Context, c *mcpadapter.Client) int {
	t.Helper()
	res, err := c.CallTool(ctx, "pid", nil, nil)
	if err != nil {
		t.Fatalf("pid: %v", err)
	}
	pid, err := strconv.Atoi(res.Text())
	if err != nil {
		t.Fatalf("pid: %q", res.Text())
	}
	return pid
}

// echoOK calls echo and fails the test unless it answers text.
func echoOK(t *testing.T, ctx context.Context, c *mcpadapter.Client, text string) {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"text": text})
	res, err := c.CallTool(ctx, "echo", args, nil)
	if err != nil || res.IsError || res.Text() != text {
		t.Fatalf("echo %q: %v %+v", text, err, res)
	}
}

// memPeak samples the heap while it runs.
type memPeak struct {
	before    runtime.MemStats
	stop      chan struct{}
	done      chan struct{}
	peakInuse atomic.Uint64 // highest HeapInuse seen
}

// watchMemory collects garbage, records the heap, and samples HeapInuse
// every 5 ms until end is called.
func watchMemory() *memPeak {
	m := &memPeak{stop: make(chan struct{}), done: make(chan struct{})}
	runtime.GC()
	runtime.ReadMemStats(&m.before)
	m.peakInuse.Store(m.before.HeapInuse)
	go func() {
		defer close(m.done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			select {
			case <-m.stop:
				return
			case <-tick.C:
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > m.peakInuse.Load() {
					m.peakInuse.Store(ms.HeapInuse)
				}
			}
		}
	}()
	return m
}

// memReport is what watchMemory saw, in bytes.
type memReport struct {
	allocated uint64 // TotalAlloc during the watch
	peakGrow  int64  // highest HeapInuse minus HeapInuse at the start
	retained  int64  // HeapInuse after a GC at the end minus at the start
}

func (r memReport) String() string {
	return fmt.Sprintf("allocated=%.1fMiB peak_heap_growth=%.1fMiB retained=%.1fMiB",
		float64(r.allocated)/mib, float64(r.peakGrow)/mib, float64(r.retained)/mib)
}

func (m *memPeak) end() memReport {
	close(m.stop)
	<-m.done
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	r := memReport{
		allocated: after.TotalAlloc - m.before.TotalAlloc,
		peakGrow:  int64(max(m.peakInuse.Load(), after.HeapInuse)) - int64(m.before.HeapInuse),
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	r.retained = int64(after.HeapInuse) - int64(m.before.HeapInuse)
	return r
}

// A server that never answers a tools/call (and ignores its cancellation):
// the call fails with a TransportError naming the tool when its timeout
// expires, the server is told, and the connection stays usable.
func TestHostileNeverAnswers(t *testing.T) {
	ctx := testCtx(t)
	before := runtime.NumGoroutine()
	c, err := mcpadapter.NewClient(stdioServer(t, "-never-answer", "add"), &mcpadapter.ClientOptions{
		Name: "mute", Timeout: 500 * time.Millisecond, Logger: quietLogger(), StopTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pid := serverPID(t, ctx, c)

	// Which limit ended the call is told by the error, which names
	// ClientOptions.Timeout when that limit fired.
	check := func(what string, byTimeout bool, call func() error) {
		t.Helper()
		start := time.Now()
		err := call()
		d := time.Since(start)
		var te *mcpadapter.TransportError
		if !errors.As(err, &te) || te.Tool != "add" || te.Server != "mute" || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: %v (%T), want a TransportError for tool add wrapping DeadlineExceeded", what, err, err)
		}
		if !strings.Contains(err.Error(), `tool "add"`) {
			t.Errorf("%s: the message does not name the tool: %v", what, err)
		}
		if named := strings.Contains(err.Error(), "no answer within 500ms (ClientOptions.Timeout)"); named != byTimeout {
			t.Errorf("%s: the error names ClientOptions.Timeout: %v, want %v: %v", what, named, byTimeout, err)
		}
		t.Logf("%s: after %v: %v", what, d.Round(time.Millisecond), err)
	}
	// ClientOptions.Timeout.
	check("ClientOptions.Timeout", true, func() error {
		_, err := c.CallTool(ctx, "add", json.RawMessage(`{"a":1,"b":2}`), nil)
		return err
	})
	// The caller's deadline, shorter than ClientOptions.Timeout.
	check("context deadline", false, func() error {
		cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		_, err := c.CallTool(cctx, "add", json.RawMessage(`{"a":1,"b":2}`), nil)
		return err
	})
	// Same process, same connection: still usable.
	echoOK(t, ctx, c, "still here")
	if got := serverPID(t, ctx, c); got != pid {
		t.Errorf("the server was restarted (pid %d, then %d): a timeout must not end the connection", pid, got)
	}
	c.Close()
	waitGone(t, pid, "the mute server")
	testenv.WaitGoroutines(t, before)
}

// raceEnabled reports whether the test binary was built with -race.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// A 50 MiB response over an 8 MiB limit fails that call with a clear
// message, without the client holding the 50 MiB; the connection stays
// usable.
func TestHostileBigResponseOverLimit(t *testing.T) {
	testenv.SkipShort(t, "a 50 MiB response")
	const size = 50
	ctx := testCtx(t)
	c, err := mcpadapter.NewClient(stdioServer(t), &mcpadapter.ClientOptions{
		Name: "huge", MaxMessageBytes: 8 * mib, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pid := serverPID(t, ctx, c)
	m := watchMemory()
	start := time.Now()
	// Bounded: an oversized response dropped as a stray line would leave
	// the call waiting for its timeout, forever without one.
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := c.CallTool(cctx, "big", json.RawMessage(fmt.Sprintf(`{"mb":%d}`, size)), nil)
	d := time.Since(start)
	mem := m.end()
	t.Logf("HOSTILE big limit=8MiB response=%dMiB took=%v %s", size, d.Round(time.Millisecond), mem)
	// What the caller sees: an error result the model can read (the
	// adapter turns the oversized response into a JSON-RPC error for
	// that call), not a transport failure.
	if err != nil {
		t.Fatalf("big: %v, want an error result (the oversized response must fail its own call at once)", err)
	}
	if !res.IsError || !strings.Contains(res.Text(), fmt.Sprintf("the limit is %d bytes", 8*mib)) ||
		!strings.Contains(res.Text(), "too large") || !strings.Contains(res.Text(), `"big"`) {
		t.Fatalf("big: %+v, want an error result naming the tool, the size and the limit", res.Text())
	}
	t.Logf("caller sees: IsError=%v %q", res.IsError, res.Text())
	// The client must not have buffered the whole line: it may hold up
	// to the limit, not the 50 MiB (holding it costs a peak of more than
	// 50 MiB and about 290 MiB of allocations, see
	// TestHostileBigResponseDefaultLimit).
	if mem.allocated > 100*mib || mem.peakGrow > 40*mib {
		t.Errorf("memory: %s; the client seems to buffer the whole %d MiB line", mem, size)
	}
	if mem.retained > 8*mib {
		t.Errorf("memory retained after the call: %s", mem)
	}
	echoOK(t, ctx, c, "after the big one")
	if got := serverPID(t, ctx, c); got != pid {
		t.Errorf("the connection was replaced (pid %d, then %d), want it kept", pid, got)
	}
}

// The same 50 MiB response arrives whole under the default limit (64 MiB).
// Under the race detector decoding it takes about 16 s on 2 cores, so a
// -race run uses 20 MiB unless MCPADAPTER_SOAK_SECONDS asks for the long
// settings.
func TestHostileBigResponseDefaultLimit(t *testing.T) {
	testenv.SkipShort(t, "a 50 MiB response")
	size := 50
	if raceEnabled() && os.Getenv("MCPADAPTER_SOAK_SECONDS") == "" {
		size = 20
	}
	ctx := testCtx(t)
	c, err := mcpadapter.NewClient(stdioServer(t), &mcpadapter.ClientOptions{Name: "huge", Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	echoOK(t, ctx, c, "warm up")
	m := watchMemory()
	start := time.Now()
	// The result is dropped when the function returns, before the heap is
	// measured again.
	n, allX, err := func() (int, bool, error) {
		res, err := c.CallTool(ctx, "big", json.RawMessage(fmt.Sprintf(`{"mb":%d}`, size)), nil)
		if err != nil || res.IsError {
			return 0, false, fmt.Errorf("%v %+v", err, res)
		}
		return len(res.Text()), strings.Trim(res.Text(), "x") == "", nil
	}()
	d := time.Since(start)
	if err != nil {
		t.Fatalf("big under the default limit: %v", err)
	}
	if n != size*mib || !allX {
		t.Fatalf("got %d bytes, want %d bytes of x", n, size*mib)
	}
	mem := m.end()
	t.Logf("HOSTILE big limit=default response=%dMiB took=%v %s", size, d.Round(time.Millisecond), mem)
	if mem.retained > 8*mib {
		t.Errorf("memory retained after the result was dropped: %s", mem)
	}
	echoOK(t, ctx, c, "after the big one")
}

// Garbage and truncated JSON objects before every response are skipped
// (and logged); every call, concurrent ones included, gets its own answer.
func TestHostileMalformedLines(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	var logs syncBuffer
	c, err := mcpadapter.NewClient(stdioServer(t, "-garbage"), &mcpadapter.ClientOptions{
		Name: "garbled", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pid := serverPID(t, ctx, c)
	concurrentEchoes(t, ctx, c, 8, 25)
	if got := serverPID(t, ctx, c); got != pid {
		t.Errorf("the connection was replaced (pid %d, then %d)", pid, got)
	}
	out := logs.String()
	if !strings.Contains(out, "server=garbled") || !strings.Contains(out, "garbage on stdout") || !strings.Contains(out, "trunc") {
		t.Errorf("the skipped lines were not logged with the server's name:\n%.2000s", out)
	}
}

// concurrentEchoes runs workers goroutines making n echo calls each, and
// checks that each gets its own text back.
func concurrentEchoes(t *testing.T, ctx context.Context, c *mcpadapter.Client, workers, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, workers*n)
	for w := range workers {
		wg.Go(func() {
			for i := range n {
				text := fmt.Sprintf("w%d-%d", w, i)
				res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"`+text+`"}`), nil)
				switch {
				case err != nil:
					errs <- fmt.Errorf("%s: %w", text, err)
				case res.IsError || res.Text() != text:
					errs <- fmt.Errorf("%s: got %q (error %v)", text, res.Text(), res.IsError)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Responses to ids nobody asked for (unknown numbers and strings, and the id
// of a request already answered) before every real response are ignored:
// no call gets an answer that is not its own.
func TestHostileWrongIDs(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c, err := mcpadapter.NewClient(stdioServer(t, "-wrong-ids"), &mcpadapter.ClientOptions{Name: "liar", Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pid := serverPID(t, ctx, c)
	concurrentEchoes(t, ctx, c, 8, 25)
	if got := serverPID(t, ctx, c); got != pid {
		t.Errorf("the connection was replaced (pid %d, then %d)", pid, got)
	}
	// Tool listing goes through the same reader.
	if _, err := c.Tools(ctx); err != nil {
		t.Fatal(err)
	}
}

// 10,000 notifications (log messages and progress) during each call: the
// call completes, the handlers see them, memory stays bounded.
func TestHostileNotificationFlood(t *testing.T) {
	testenv.SkipShort(t, "a flood of 40000 notifications")
	const flood, calls = 10000, 3
	// A bound for a hang, not for speed: with -race on a loaded machine
	// the 40000 notifications take tens of seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var logged, progressed atomic.Int64
	c, err := mcpadapter.NewClient(stdioServer(t, "-flood", strconv.Itoa(flood)), &mcpadapter.ClientOptions{
		Name:   "chatty",
		Logger: quietLogger(),
		LogHandler: func(context.Context, *mcp.LoggingMessageRequest) {
			logged.Add(1)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	echoOK(t, ctx, c, "warm up") // its flood counts too
	// The connection holds the flood back, and holds the result of a call
	// with a progress handler until the notifications before it have been
	// handled: when such a call returns, its progress notifications and
	// the log notifications before them have all been handled.
	m := watchMemory()
	start := time.Now()
	for i := range calls {
		var mine atomic.Int64
		text := fmt.Sprintf("through the flood %d", i)
		res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"`+text+`"}`), &mcpadapter.CallOptions{Progress: func(mcpadapter.Progress) { mine.Add(1); progressed.Add(1) }})
		if err != nil || res.IsError || res.Text() != text {
			t.Fatalf("call %d: %v %+v", i, err, res)
		}
		if got, want := mine.Load(), int64(flood/2); got != want {
			t.Errorf("call %d returned after its progress handler saw %d notifications, want %d", i, got, want)
		}
		if got, want := logged.Load(), int64((i+2)*flood/2); got != want {
			t.Errorf("call %d returned after the log handler saw %d notifications, want %d", i, got, want)
		}
	}
	d := time.Since(start)
	mem := m.end()
	t.Logf("HOSTILE flood notifications=%d calls=%d took=%v log_handled=%d progress_routed=%d %s",
		calls*flood, calls, d.Round(time.Millisecond), logged.Load(), progressed.Load(), mem)
	if mem.peakGrow > 16*mib || mem.retained > 4*mib {
		t.Errorf("memory: %s", mem)
	}
}

// A server that closes its stdout but keeps running (and ignores SIGTERM):
// the call fails with a ProcessExitError saying so, the process is killed,
// and the next call starts a new one.
func TestHostileClosedStdout(t *testing.T) {
	ctx := testCtx(t)
	before := runtime.NumGoroutine()
	c, err := mcpadapter.NewClient(stdioServer(t, "-ignore-sigterm"), &mcpadapter.ClientOptions{
		Name: "deaf", Logger: quietLogger(), StopTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pid := serverPID(t, ctx, c)
	start := time.Now()
	res, err := c.CallTool(ctx, "close_stdout", nil, nil)
	d := time.Since(start)
	var te *mcpadapter.TransportError
	var pe *mcpadapter.ProcessExitError
	if !errors.As(err, &te) || !errors.As(err, &pe) || !pe.StillRunning || te.Tool != "close_stdout" {
		t.Fatalf("close_stdout: %v (%T) %+v, want a TransportError wrapping a ProcessExitError with StillRunning", err, err, res)
	}
	if !strings.Contains(err.Error(), "closed its stdout but kept running") || !strings.Contains(err.Error(), testserver.ClosedStdoutMessage) {
		t.Errorf("message lacks the cause or the stderr tail:\n%v", err)
	}
	t.Logf("after %v: %v", d.Round(time.Millisecond), err)
	if d > 6*time.Second {
		t.Errorf("took %v to fail", d)
	}
	// Killed by the time the caller hears of it (allow a moment for the
	// kernel to reap it).
	waitGone(t, pid, "the server that closed its stdout")
	echoOK(t, ctx, c, "new process")
	if got := serverPID(t, ctx, c); got == pid {
		t.Errorf("still the old process %d", pid)
	}
	c.Close()
	testenv.WaitGoroutines(t, before)
}

// A server that dies under concurrent calls: every call in flight fails with
// a TransportError that says how the server ended (a *ProcessExitError), not
// only the first one to notice.
func TestHostileKilledUnderConcurrentCalls(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("kills a process group")
	}
	ctx := testCtx(t)
	c, err := mcpadapter.NewClient(stdioServer(t), &mcpadapter.ClientOptions{Name: "doomed", Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pid := serverPID(t, ctx, c)
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { _, errs[i] = c.CallTool(ctx, "slow", json.RawMessage(`{"ms":10000}`), nil) })
	}
	time.Sleep(300 * time.Millisecond)
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	with := 0
	for i, err := range errs {
		var te *mcpadapter.TransportError
		var pe *mcpadapter.ProcessExitError
		if !errors.As(err, &te) {
			t.Fatalf("call %d: %v, want a TransportError", i, err)
		}
		if errors.As(err, &pe) && pe.Signal == "killed" {
			with++
		} else {
			t.Logf("call %d: %v", i, err)
		}
	}
	if with != n {
		t.Errorf("%d of %d calls in flight were told the server was killed (a *ProcessExitError); the others only that the connection closed", with, n)
	}
	echoOK(t, ctx, c, "after the kill")
}

// waitReaped waits (up to 5 s) until pid no longer exists at all: not even
// a zombie, whose other threads may still hold its files open.
func waitReaped(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); errors.Is(err, os.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d was not reaped", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// grandchildPID returns a StderrHandler that reports the pid the test
// server prints for its own child.
func grandchildPID() (func(server, line string), <-chan int) {
	pids := make(chan int, 1)
	return func(_, line string) {
		var pid int
		if _, err := fmt.Sscanf(line, "grandchild pid %d", &pid); err == nil {
			select {
			case pids <- pid:
			default:
			}
		}
	}, pids
}

// A request whose write fails (the server died; here its stdout is still
// held open by its own child, so the connection does not look closed yet)
// never reached the server: it must be retried once, on a new connection,
// and succeed.
func TestHostileWriteFailureRetriedOnNewConnection(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("kills a process")
	}
	ctx := testCtx(t)
	onStderr, grandchild := grandchildPID()
	c, err := mcpadapter.NewClient(stdioServer(t, "-grandchild-holds-stdout"), &mcpadapter.ClientOptions{
		Name: "orphaned", Logger: quietLogger(), StopTimeout: 200 * time.Millisecond, StderrHandler: onStderr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pid := serverPID(t, ctx, c)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil { // the server only, not its group
		t.Fatal(err)
	}
	waitReaped(t, pid) // its stdin is closed: the next write fails
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res, err := c.CallTool(cctx, "echo", json.RawMessage(`{"text":"retried"}`), nil)
	if err != nil || res.Text() != "retried" {
		t.Fatalf("echo after the server died: %v %+v; a request that could not be written must be retried on a new connection", err, res)
	}
	if got := serverPID(t, ctx, c); got == pid {
		t.Errorf("still talking to pid %d", pid)
	}
	c.Close()
	select {
	case gc := <-grandchild:
		waitGone(t, gc, "the dead server's child")
	default:
		t.Error("the server did not report its child")
	}
}

// A server that dies while its own child holds its stdout open: the calls
// in flight fail promptly with a *ProcessExitError (the client knows its
// child process has exited), rather than wait for their timeout (forever
// without one).
func TestHostileServerDiesStdoutHeldOpen(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("kills a process")
	}
	ctx := testCtx(t)
	c, err := mcpadapter.NewClient(stdioServer(t, "-grandchild-holds-stdout"), &mcpadapter.ClientOptions{
		Name: "orphaned", Logger: quietLogger(), StopTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pid := serverPID(t, ctx, c)
	done := make(chan error, 1)
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	go func() {
		_, err := c.CallTool(cctx, "slow", json.RawMessage(`{"ms":60000}`), nil)
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	killed := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil { // the server only, not its group
		t.Fatal(err)
	}
	err = <-done
	d := time.Since(killed)
	var pe *mcpadapter.ProcessExitError
	if !errors.As(err, &pe) || d > 5*time.Second {
		t.Fatalf("the call in flight ended %v after the server died, with %v; want a *ProcessExitError within seconds", d.Round(time.Millisecond), err)
	}
	echoOK(t, ctx, c, "new server")
}

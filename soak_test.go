package mcpadapter_test

// Chaos soak: calls through two adapters (a stdio server, a streamable HTTP
// server process) while their servers are killed at random moments. Run
// longer with MCPADAPTER_SOAK_SECONDS=60 (and another seed with
// MCPADAPTER_SOAK_SEED=n).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
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
)

const (
	soakWorkers     = 8               // calling goroutines per adapter
	soakCallTimeout = 5 * time.Second // each call's context
	soakLostAfter   = soakCallTimeout + 2*time.Second
	soakHeapSlack   = 20 * mib // heap after the run may exceed the start by this much
	soakMaxFaults   = 200
	soakMaxCalls    = 2_000_000 // per worker
	soakQuiet       = 1500 * time.Millisecond
)

// soakDuration is how long the workers call: MCPADAPTER_SOAK_SECONDS, or 6 s.
func soakDuration(t *testing.T) time.Duration {
	if v := os.Getenv("MCPADAPTER_SOAK_SECONDS"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 3 || f > 24*3600 {
			t.Fatalf("MCPADAPTER_SOAK_SECONDS=%q: want a number of seconds, at least 3", v)
		}
		return time.Duration(f * float64(time.Second))
	}
	return 6 * time.Second
}

func soakSeed(t *testing.T) uint64 {
	if v := os.Getenv("MCPADAPTER_SOAK_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("MCPADAPTER_SOAK_SEED=%q: %v", v, err)
		}
		return n
	}
	return 1
}

// fault is one server kill.
type fault struct {
	at        time.Time     // when the signal was sent
	pid       int           // the process killed
	recovered time.Duration // from at to the end of the first successful call started after it; 0 until then
	restart   time.Duration // http: time to have the new process listening
}

// soakTarget is one adapter under chaos and what happened to its calls.
type soakTarget struct {
	name  string
	echo  *mcpadapter.Tool
	slow  *mcpadapter.Tool
	calls atomic.Int64 // calls made
	ok    atomic.Int64 // succeeded
	fail  atomic.Int64 // returned a TransportError
	bad   atomic.Int64 // returned anything else: a wrong result, another error
	late  atomic.Int64 // returned, but after their timeout plus a second
	timed atomic.Int64 // failed because their timeout expired

	mu     sync.Mutex
	faults []*fault
	kinds  map[string]int // TransportError causes, digits masked
	badLog []string
}

func (s *soakTarget) addFault(f *fault) {
	s.mu.Lock()
	s.faults = append(s.faults, f)
	s.mu.Unlock()
}

// succeeded records a successful call that ran from start to end: it ends
// the outage of every fault injected before the call started.
func (s *soakTarget) succeeded(start, end time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.faults) - 1; i >= 0; i-- {
		f := s.faults[i]
		if f.recovered != 0 {
			break
		}
		if start.After(f.at) {
			f.recovered = end.Sub(f.at)
		}
	}
}

var digits = regexp.MustCompile(`[0-9]+`)

func (s *soakTarget) failed(te *mcpadapter.TransportError) {
	msg := te.Err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if len(msg) > 140 {
		msg = msg[:140]
	}
	key := te.Op + ": " + digits.ReplaceAllString(msg, "N")
	s.mu.Lock()
	if len(s.kinds) < 50 || s.kinds[key] > 0 {
		s.kinds[key]++
	}
	s.mu.Unlock()
}

func (s *soakTarget) unexpected(format string, args ...any) {
	s.bad.Add(1)
	s.mu.Lock()
	if len(s.badLog) < 10 {
		s.badLog = append(s.badLog, fmt.Sprintf(format, args...))
	}
	s.mu.Unlock()
}

// inflight tracks calls that have not returned, to find lost ones.
type inflight struct {
	mu    sync.Mutex
	next  uint64
	calls map[uint64]time.Time
	lost  map[uint64]bool
}

func (f *inflight) begin() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	f.calls[f.next] = time.Now()
	return f.next
}

func (f *inflight) end(id uint64) {
	f.mu.Lock()
	delete(f.calls, id)
	f.mu.Unlock()
}

// sweep marks calls running for longer than soakLostAfter as lost, and
// returns how many are lost so far.
func (f *inflight) sweep() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, start := range f.calls {
		if time.Since(start) > soakLostAfter {
			f.lost[id] = true
		}
	}
	return len(f.lost)
}

// work calls echo and slow in a loop until stop, checking each outcome.
func (s *soakTarget) work(ctx context.Context, w int, stop time.Time, track *inflight) {
	for i := 0; i < soakMaxCalls && time.Now().Before(stop); i++ {
		tool, args, want := s.echo, "", fmt.Sprintf("%s-w%d-%d", s.name, w, i)
		if i%2 == 1 {
			tool, want = s.slow, "slept 5ms"
			args = `{"ms":5}`
		} else {
			args = `{"text":"` + want + `"}`
		}
		s.calls.Add(1)
		id := track.begin()
		start := time.Now()
		cctx, cancel := context.WithTimeout(ctx, soakCallTimeout)
		res, err := tool.Call(cctx, json.RawMessage(args))
		cancel()
		end := time.Now()
		track.end(id)
		if d := end.Sub(start); d > soakCallTimeout+time.Second {
			s.late.Add(1)
			s.unexpected("%s %s: returned after %v", tool.Name, args, d)
		}
		var te *mcpadapter.TransportError
		switch {
		case err == nil && !res.IsError && res.Text() == want:
			s.ok.Add(1)
			s.succeeded(start, end)
		case err == nil:
			s.unexpected("%s %s: result %q (error %v), want %q", tool.Name, args, res.Text(), res.IsError, want)
		case errors.As(err, &te):
			s.fail.Add(1)
			s.failed(te)
			if errors.Is(err, context.DeadlineExceeded) {
				s.timed.Add(1)
			}
			if te.Tool != tool.OriginalName {
				s.unexpected("%s: TransportError names tool %q", tool.Name, te.Tool)
			}
			// Let a dead server's port or process go before trying again:
			// callers retry, they do not spin.
			time.Sleep(2 * time.Millisecond)
		default:
			s.unexpected("%s %s: %T %v, want nil or a *TransportError", tool.Name, args, err, err)
		}
	}
}

// testserverChildren returns the pids of this process's children running
// the mcptestserver binary bin (zombies included), split into stdio
// servers and the others (-transport http).
func testserverChildren(bin string) (stdio, other []int) {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", os.Getpid()))
	seen := map[int]bool{}
	for _, task := range tasks {
		b, _ := os.ReadFile(task)
		for _, f := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(f)
			if err != nil || seen[pid] {
				continue
			}
			seen[pid] = true
			cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
			args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
			switch {
			case err == nil && len(cmdline) > 0 && args[0] != bin:
				// Another program.
			case err == nil && len(cmdline) > 0 && slices.Contains(args, "-transport"):
				other = append(other, pid)
			case err == nil && len(cmdline) > 0:
				stdio = append(stdio, pid)
			case strings.TrimSpace(string(comm)) == filepath.Base(bin)[:min(15, len(filepath.Base(bin)))]:
				// A zombie has no cmdline left.
				other = append(other, pid)
			}
		}
	}
	return stdio, other
}

// httpServer is the streamable HTTP server process, restarted on the same
// address after each kill.
type httpServer struct {
	bin, addr string
	mu        sync.Mutex
	p         *testserver.Process
}

// restart kills the process and starts a new one on the same address,
// retrying for up to 10 s while the port is not free yet.
func (h *httpServer) restart() (old int, at time.Time, took time.Duration, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	old = h.p.Cmd.Process.Pid
	at = time.Now()
	h.p.Stop()
	deadline := time.Now().Add(10 * time.Second)
	for attempt := 0; attempt < 100; attempt++ {
		var p *testserver.Process
		p, err = testserver.LaunchProcess(h.bin, 10*time.Second, "-transport", "http", "-addr", h.addr)
		if err == nil {
			h.p = p
			return old, at, time.Since(at), nil
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return old, at, time.Since(at), err
}

func (h *httpServer) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.p != nil {
		h.p.Stop()
	}
}

func durationStats(ds []time.Duration) (median, maximum time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2], s[len(s)-1]
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
}

func TestSoakChaos(t *testing.T) {
	testenv.SkipShort(t, "the soak test")
	if runtime.GOOS != "linux" {
		t.Skip("finds and kills server processes through /proc")
	}
	duration, seed := soakDuration(t), soakSeed(t)
	bin := testserver.Build(t)
	// Processes other tests left behind are theirs to report; they are
	// neither killed nor counted here.
	s0, o0 := testserverChildren(bin)
	preexisting := map[int]bool{}
	for _, pid := range append(s0, o0...) {
		preexisting[pid] = true
	}
	if len(preexisting) > 0 {
		t.Logf("test server processes left by earlier tests, ignored: %v %v", s0, o0)
	}
	children := func() (stdio, other []int) {
		s, o := testserverChildren(bin)
		s = slices.DeleteFunc(s, func(pid int) bool { return preexisting[pid] })
		o = slices.DeleteFunc(o, func(pid int) bool { return preexisting[pid] })
		return s, o
	}
	ctx := context.Background()
	goroutinesBefore := runtime.NumGoroutine()
	var memBefore runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&memBefore)

	// The streamable HTTP server, a process restarted on its address.
	first, err := testserver.LaunchProcess(bin, 30*time.Second, "-transport", "http")
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(first.URL)
	if err != nil {
		t.Fatal(err)
	}
	hs := &httpServer{bin: bin, addr: u.Host, p: first}
	defer hs.stop()

	targets := map[string]any{
		"stdio": mcpadapter.Command{Path: bin},
		"http":  first.URL,
	}
	var all []*soakTarget
	var adapters []*mcpadapter.Adapter
	for _, name := range []string{"stdio", "http"} {
		c, err := mcpadapter.NewClient(targets[name], &mcpadapter.ClientOptions{Name: "chaos-" + name, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		a, err := mcpadapter.New(c, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		adapters = append(adapters, a)
		lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		tools := toolMap(t, lctx, a)
		cancel()
		if tools["echo"] == nil || tools["slow"] == nil {
			t.Fatalf("%s: no echo or slow tool", name)
		}
		all = append(all, &soakTarget{name: name, echo: tools["echo"], slow: tools["slow"], kinds: map[string]int{}})
	}
	stdioT, httpT := all[0], all[1]

	start := time.Now()
	stop := start.Add(duration)
	track := &inflight{calls: map[uint64]time.Time{}, lost: map[uint64]bool{}}
	var workers sync.WaitGroup
	for _, tg := range all {
		for w := range soakWorkers {
			workers.Go(func() { tg.work(ctx, w, stop, track) })
		}
	}

	// The fault injector: alternately SIGKILL the stdio server's process
	// group and kill and restart the HTTP server, at random moments, until
	// soakQuiet before the end (to see the last recovery).
	var injectErrs []string
	var killed []int
	skipped := 0 // stdio faults skipped: no server running at that moment
	injectorDone := make(chan struct{})
	go func() {
		defer close(injectorDone)
		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		for n := 0; n < soakMaxFaults; n++ {
			at := time.Now().Add(250*time.Millisecond + time.Duration(rng.Int64N(int64(500*time.Millisecond))))
			if at.After(stop.Add(-soakQuiet)) {
				return
			}
			time.Sleep(time.Until(at))
			if n%2 == 0 {
				pids, _ := children()
				for deadline := time.Now().Add(time.Second); len(pids) == 0 && time.Now().Before(deadline); {
					time.Sleep(10 * time.Millisecond) // between connections
					pids, _ = children()
				}
				if len(pids) == 0 {
					skipped++
					continue
				}
				pid := pids[rng.IntN(len(pids))]
				f := &fault{at: time.Now(), pid: pid}
				if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
					injectErrs = append(injectErrs, fmt.Sprintf("fault %d: kill -%d: %v", n, pid, err))
					continue
				}
				stdioT.addFault(f)
				killed = append(killed, pid)
				for deadline := time.Now().Add(5 * time.Second); !processGone(pid) && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond)
				}
			} else {
				old, at, took, err := hs.restart()
				killed = append(killed, old)
				if err != nil {
					injectErrs = append(injectErrs, fmt.Sprintf("fault %d: restarting the HTTP server: %v", n, err))
					return
				}
				httpT.addFault(&fault{at: at, pid: old, restart: took})
			}
		}
	}()

	// Watch for lost calls while the workers run, and give them their
	// timeout (plus slack) after the end to return.
	var lost int
	workersDone := make(chan struct{})
	go func() { workers.Wait(); close(workersDone) }()
	sweep := time.NewTicker(100 * time.Millisecond)
	hardStop := time.NewTimer(duration + soakLostAfter + time.Second)
wait:
	for {
		select {
		case <-workersDone:
			break wait
		case <-sweep.C:
			lost = track.sweep()
		case <-hardStop.C:
			lost = track.sweep()
			t.Errorf("workers still running %v after the end", soakLostAfter+time.Second)
			break wait
		}
	}
	sweep.Stop()
	hardStop.Stop()
	<-injectorDone
	elapsed := time.Since(start)

	// Report.
	var calls, ok, failed, bad, late, timed int64
	var recoveries []time.Duration
	faults := 0
	for _, tg := range all {
		calls += tg.calls.Load()
		ok += tg.ok.Load()
		failed += tg.fail.Load()
		bad += tg.bad.Load()
		late += tg.late.Load()
		timed += tg.timed.Load()
		tg.mu.Lock()
		var rec, restarts []time.Duration
		for i, f := range tg.faults {
			if f.recovered == 0 {
				t.Errorf("%s: no successful call after fault %d (pid %d killed at +%v)", tg.name, i, f.pid, f.at.Sub(start).Round(time.Millisecond))
				continue
			}
			rec = append(rec, f.recovered)
			if f.restart > 0 {
				restarts = append(restarts, f.restart)
			}
		}
		faults += len(tg.faults)
		recoveries = append(recoveries, rec...)
		med, mx := durationStats(rec)
		rmed, rmx := durationStats(restarts)
		t.Logf("SOAK target=%s calls=%d ok=%d failed=%d timed_out=%d unexpected=%d late=%d faults=%d recover_median_ms=%s recover_max_ms=%s restart_median_ms=%s restart_max_ms=%s",
			tg.name, tg.calls.Load(), tg.ok.Load(), tg.fail.Load(), tg.timed.Load(), tg.bad.Load(), tg.late.Load(), len(tg.faults), ms(med), ms(mx), ms(rmed), ms(rmx))
		keys := make([]string, 0, len(tg.kinds))
		for k := range tg.kinds {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return tg.kinds[keys[i]] > tg.kinds[keys[j]] })
		for _, k := range keys[:min(len(keys), 8)] {
			t.Logf("  %s transport errors: %5d × %s", tg.name, tg.kinds[k], k)
		}
		for _, b := range tg.badLog {
			t.Errorf("%s: unexpected outcome: %s", tg.name, b)
		}
		if tg.ok.Load() == 0 {
			t.Errorf("%s: no call succeeded", tg.name)
		}
		tg.mu.Unlock()
	}
	for _, e := range injectErrs {
		t.Error(e)
	}
	if skipped > 0 {
		t.Logf("%d stdio faults skipped: no server process running at that moment", skipped)
	}

	// Tear down, then look for leftovers.
	for _, a := range adapters {
		a.Close()
	}
	hs.stop()
	var leftovers []int
	for deadline := time.Now().Add(5 * time.Second); ; {
		s, o := children()
		leftovers = append(s, o...)
		if len(leftovers) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	var alive []int
	for _, pid := range killed {
		if !processGone(pid) {
			alive = append(alive, pid)
		}
	}
	goroutinesAfter := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); goroutinesAfter > goroutinesBefore && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		goroutinesAfter = runtime.NumGoroutine()
	}
	var memAfter runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&memAfter)

	med, mx := durationStats(recoveries)
	t.Logf("SOAK seconds=%.1f seed=%d workers=%d calls=%d ok=%d faults=%d failed=%d timed_out=%d lost=%d late=%d unexpected=%d recover_median_ms=%s recover_max_ms=%s heap_before_mib=%.1f heap_after_mib=%.1f goroutines_before=%d goroutines_after=%d orphans=%d",
		elapsed.Seconds(), seed, 2*soakWorkers, calls, ok, faults, failed, timed, lost, late, bad, ms(med), ms(mx),
		float64(memBefore.HeapAlloc)/mib, float64(memAfter.HeapAlloc)/mib, goroutinesBefore, goroutinesAfter, len(leftovers)+len(alive))

	if lost != 0 {
		t.Errorf("%d calls lost (neither returned nor timed out within %v)", lost, soakLostAfter)
	}
	if faults < 2 {
		t.Errorf("only %d faults injected", faults)
	}
	if len(leftovers) > 0 {
		t.Errorf("test server processes left: %v", leftovers)
	}
	if len(alive) > 0 {
		t.Errorf("killed servers still running: %v", alive)
	}
	if goroutinesAfter > goroutinesBefore {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines, %d before:\n%s", goroutinesAfter, goroutinesBefore, buf[:runtime.Stack(buf, true)])
	}
	if memAfter.HeapAlloc > memBefore.HeapAlloc+soakHeapSlack {
		t.Errorf("heap %.1f MiB after the run, %.1f MiB before: more than %d MiB kept", float64(memAfter.HeapAlloc)/mib, float64(memBefore.HeapAlloc)/mib, soakHeapSlack/mib)
	}
}

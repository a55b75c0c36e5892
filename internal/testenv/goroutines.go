package testenv

import (
	"bytes"
	"runtime"
	"testing"
	"time"
)

// WaitGoroutines waits, up to 5 s, for the goroutine count to fall to at
// most n, and fails the test with every goroutine's stack if it does not.
func WaitGoroutines(t testing.TB, n int) {
	t.Helper()
	WaitGoroutinesExcept(t, n)
}

// WaitGoroutinesExcept is WaitGoroutines counting no goroutine whose stack
// holds any of except (a test's own server's, say, which the code under
// test cannot end).
func WaitGoroutinesExcept(t testing.TB, n int, except ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		count, stacks := goroutines(except)
		if count <= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines, want at most %d:\n%s", count, n, stacks)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// goroutines counts the goroutines whose stacks hold none of except, and
// returns every goroutine's stack.
func goroutines(except []string) (int, []byte) {
	if len(except) == 0 {
		return runtime.NumGoroutine(), stacks()
	}
	all := stacks()
	n := 0
	for g := range bytes.SplitSeq(all, []byte("\n\n")) {
		skip := false
		for _, e := range except {
			skip = skip || bytes.Contains(g, []byte(e))
		}
		if !skip && len(bytes.TrimSpace(g)) > 0 {
			n++
		}
	}
	return n, all
}

func stacks() []byte {
	buf := make([]byte, 1<<20)
	for {
		if n := runtime.Stack(buf, true); n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

package testenv

import (
	"runtime"
	"testing"
	"time"
)

// WaitGoroutines waits, up to 5 s, for the goroutine count to fall to at
// most n, and fails the test with every goroutine's stack if it does not.
func WaitGoroutines(t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

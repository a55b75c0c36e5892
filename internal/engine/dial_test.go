package engine

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestConnectDeadline: paused time does not count; stop means never. The
// clock is synctest's: the times are exact.
func TestConnectDeadline(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var fired atomic.Int64
		d := newConnectDeadline(150*time.Millisecond, func() { fired.Store(int64(time.Since(start))) })
		time.Sleep(50 * time.Millisecond)
		resume := d.pause()
		inner := d.pause() // nested pauses
		time.Sleep(200 * time.Millisecond)
		inner()
		synctest.Wait()
		if fired.Load() != 0 {
			t.Fatal("fired while paused")
		}
		resume()
		resume() // twice is harmless
		time.Sleep(time.Second)
		if got, want := time.Duration(fired.Load()), 350*time.Millisecond; got != want {
			t.Errorf("fired after %v; want %v: 150ms + the 200ms pause", got, want)
		}

		var late atomic.Bool
		s := newConnectDeadline(50*time.Millisecond, func() { late.Store(true) })
		r := s.pause()
		s.stop()
		r() // resuming a stopped deadline does not restart it
		time.Sleep(time.Second)
		if late.Load() {
			t.Error("a stopped deadline fired")
		}

		// A deadline that fired before a pause stays fired.
		var count atomic.Int32
		f := newConnectDeadline(10*time.Millisecond, func() { count.Add(1) })
		time.Sleep(20 * time.Millisecond)
		f.pause()()
		time.Sleep(time.Second)
		if n := count.Load(); n != 1 {
			t.Errorf("fired %d times, want once", n)
		}
	})
}

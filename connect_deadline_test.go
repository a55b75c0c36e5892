package mcpadapter

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestConnectDeadline: paused time does not count; stop means never.
func TestConnectDeadline(t *testing.T) {
	var fired atomic.Int64
	start := time.Now()
	d := newConnectDeadline(150*time.Millisecond, func() { fired.Store(int64(time.Since(start))) })
	time.Sleep(50 * time.Millisecond)
	resume := d.pause()
	inner := d.pause() // nested pauses
	time.Sleep(200 * time.Millisecond)
	inner()
	if fired.Load() != 0 {
		t.Fatal("fired while paused")
	}
	resume()
	resume() // twice is harmless
	deadline := time.Now().Add(2 * time.Second)
	for fired.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := time.Duration(fired.Load()); got < 340*time.Millisecond {
		t.Errorf("fired after %v; want about 150ms + the 200ms pause", got)
	}

	var late atomic.Bool
	s := newConnectDeadline(50*time.Millisecond, func() { late.Store(true) })
	r := s.pause()
	s.stop()
	r() // resuming a stopped deadline does not restart it
	time.Sleep(120 * time.Millisecond)
	if late.Load() {
		t.Error("a stopped deadline fired")
	}
}

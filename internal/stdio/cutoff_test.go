//go:build unix

package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// slowReader is a server script that reads its stdin slowly (2 KiB every
// 2 ms) into the file got.
func slowReader(got string) string {
	return `while :; do dd bs=2048 count=1 status=none || exit; sleep 0.002; done > '` + got + `'`
}

// gatedCat is a server script that reads nothing from its stdin until the
// file start exists (30 s at most), then copies it into the file got.
func gatedCat(start, got string) string {
	return `i=0; while [ ! -e '` + start + `' ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done; exec cat > '` + got + `'`
}

// checkLines reports anything in data, what a server read from its stdin,
// but whole JSON lines and, last, at most one line cut off in the middle:
// nothing follows a cut line. It returns the length of that cut line.
func checkLines(t *testing.T, data []byte) int {
	t.Helper()
	lines := bytes.Split(data, []byte("\n"))
	for i, l := range lines[:len(lines)-1] {
		if !json.Valid(l) {
			t.Errorf("line %d of %d (%d bytes) is not a JSON message: %.80q…", i+1, len(lines), len(l), l)
		}
	}
	return len(lines[len(lines)-1])
}

// The error of a write cut off by its call's Timeout says so: it is a
// *CutOffError (the connection was closed), names the context's cause, and errors.Is still finds the context's error, for a
// cause that wraps it (the engine's Timeout) and for one that does not
// (a cancellation with a cause of its own). So does the error of a write
// that waited for its turn, and the *CutOffError that ended reading.
func TestStdioWriteErrorNamesCause(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		c := shConn(t, `exec sleep 30`) // never reads stdin
		// Long enough for the message to be encoded and its first bytes
		// written under any load (or no line is cut: a write that wrote
		// nothing leaves the connection as it was).
		timeout := fmt.Errorf("no answer within 1s (ClientOptions.Timeout): %w", context.DeadlineExceeded)
		ctx, cancel := context.WithTimeoutCause(t.Context(), time.Second, timeout)
		defer cancel()
		err := c.Write(ctx, bigMessage())
		var co *CutOffError
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "ClientOptions.Timeout") || !errors.As(err, &co) {
			t.Errorf("Write: %v, want a *CutOffError naming the Timeout, wrapping DeadlineExceeded", err)
		}
		if err := c.ReadError(); !errors.As(err, &co) || !strings.Contains(err.Error(), "ClientOptions.Timeout") {
			t.Errorf("ReadError: %v, want a *CutOffError naming the Timeout", err)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		c := shConn(t, `exec sleep 30`)
		ctx, cancel := context.WithCancelCause(t.Context())
		defer cancel(nil)
		done := make(chan error, 1)
		go func() { done <- c.Write(ctx, bigMessage()) }()
		for deadline := time.Now().Add(10 * time.Second); len(c.writing) == 0; { // it has its turn
			if time.Now().After(deadline) {
				t.Fatal("the write did not start")
			}
			time.Sleep(time.Millisecond)
		}
		// A writer waiting for its turn, with a cause of its own.
		waitCtx, waitCancel := context.WithTimeoutCause(t.Context(), 100*time.Millisecond, errors.New("the agent's step ended"))
		defer waitCancel()
		err := c.Write(waitCtx, &jsonrpc.Request{ID: intID(2), Method: "ping"})
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "the agent's step ended") ||
			!strings.Contains(err.Error(), "waiting to write") {
			t.Errorf("a write waiting its turn: %v, want its cause named, wrapping DeadlineExceeded", err)
		}
		cancel(errors.New("the user stopped the agent"))
		select {
		case err = <-done:
		case <-time.After(10 * time.Second): // a hang guard
			t.Fatal("the cut write did not return")
		}
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "the user stopped the agent") {
			t.Errorf("Write: %v, want its cause named, wrapping Canceled", err)
		}
	})
}

// A write that times out before it wrote a byte leaves no half line: the
// connection goes on, and the next write reaches the server whole. The
// lines are 4 KiB, which a pipe takes whole or not at all, so the write
// that finds the pipe full writes nothing.
func TestStdioCutAtZeroBytesKeepsConnection(t *testing.T) {
	dir := t.TempDir()
	got, start := dir+"/stdin", dir+"/start"
	c := shConn(t, gatedCat(start, got))
	line := func(id int64) *jsonrpc.Request {
		text := strings.Repeat("z", 4096-len(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"x","params":{"t":""}}`, id))-1)
		return &jsonrpc.Request{ID: intID(id), Method: "x", Params: []byte(`{"t":"` + text + `"}`)}
	}
	var err error
	id := int64(1)
	for ; id <= 64; id++ { // 16 fill a 64 KiB pipe
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		err = c.Write(ctx, line(id))
		cancel()
		if err != nil {
			break
		}
	}
	var co *CutOffError
	if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &co) || !strings.Contains(err.Error(), "0 of 4096 bytes") {
		t.Fatalf("write %d: %v, want DeadlineExceeded with 0 of 4096 bytes written", id, err)
	}
	if err := c.ReadError(); err != nil {
		t.Fatalf("ReadError after a write that wrote nothing: %v", err)
	}
	if err := os.WriteFile(start, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a hang guard
	defer cancel()
	if err := c.Write(ctx, line(100)); err != nil {
		t.Fatalf("a write after the one that wrote nothing: %v", err)
	}
	_ = c.Close()
	data, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if n := checkLines(t, data); n != 0 || bytes.Count(data, []byte("\n")) != int(id) || !bytes.Contains(data, []byte(`"id":100,`)) {
		t.Errorf("the server read %d bytes, %d lines, %d bytes after the last one; want the %d lines written before the write that wrote nothing, and the one after it",
			len(data), bytes.Count(data, []byte("\n")), n, id-1)
	}
	t.Logf("write %d wrote nothing; the server read %d whole lines", id, bytes.Count(data, []byte("\n")))
}

// Writers racing the cut: whatever order they take their turns in and
// whenever the cut falls, the server reads whole lines and then at most
// one line cut off, with nothing after it; every write that failed after
// the cut says the connection was cut off.
func TestStdioConcurrentWritersRaceTheCut(t *testing.T) {
	got := t.TempDir() + "/stdin"
	c := shConn(t, slowReader(got))
	const writers = 12
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		results = map[string]int{}
	)
	for w := range writers {
		wg.Go(func() {
			for i := range 20 {
				id := int64(w*100 + i)
				size, timeout := 200, 10*time.Second // a hang guard
				if w == 0 && i == 5 {
					size, timeout = 1<<20, 150*time.Millisecond // cut off
				}
				ctx, cancel := context.WithTimeout(t.Context(), timeout)
				err := c.Write(ctx, &jsonrpc.Request{ID: intID(id), Method: "tools/call",
					Params: []byte(`{"name":"echo","arguments":{"text":"` + strings.Repeat("b", size) + `"}}`)})
				cancel()
				var co *CutOffError
				kind := "ok"
				switch {
				case err == nil:
				case errors.As(err, &co):
					kind = "cut off"
				case errors.Is(err, context.DeadlineExceeded):
					kind = "deadline"
				default:
					kind = "other"
					t.Errorf("write %d: %v", id, err)
				}
				mu.Lock()
				results[kind]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	var co *CutOffError
	cut := errors.As(c.ReadError(), &co)
	_ = c.Close()
	data, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	n := checkLines(t, data)
	if n > 0 && !cut {
		t.Errorf("the server read a half line of %d bytes, but the connection was not cut off", n)
	}
	if cut && co.Written > 0 && results["cut off"] == 0 && results["deadline"] <= 1 {
		t.Logf("no write followed the cut")
	}
	t.Logf("writes: %v; cut: %v; the server read %d bytes, %d after the last newline", results, cut, len(data), n)
}

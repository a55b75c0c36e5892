package stdio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// sizedRequest is a request whose line (with its newline) is size bytes.
func sizedRequest(t *testing.T, id int64, size int) *jsonrpc.Request {
	t.Helper()
	msg := &jsonrpc.Request{ID: intID(id), Method: "x", Params: []byte(`{"t":""}`)}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		t.Fatal(err)
	}
	msg.Params = []byte(`{"t":"` + strings.Repeat("z", size-len(data)-1) + `"}`)
	return msg
}

// stdinPipe calls the system call trap (fcntl, ioctl) with op and arg on
// the server's stdin pipe and returns its result.
func stdinPipe(t *testing.T, c *Conn, trap, op, arg uintptr) int {
	t.Helper()
	rc, err := c.proc.stdin.SyscallConn() // not Fd, which would make the pipe block
	if err != nil {
		t.Fatal(err)
	}
	var r uintptr
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		r, _, errno = syscall.Syscall(trap, fd, op, arg)
	}); err != nil || errno != 0 {
		t.Fatal(err, errno)
	}
	return int(r)
}

// pipeSize returns the size of the server's stdin pipe.
func pipeSize(t *testing.T, c *Conn) int {
	t.Helper()
	return stdinPipe(t, c, syscall.SYS_FCNTL, 1032 /* F_GETPIPE_SZ */, 0)
}

// pipeHolds returns how many bytes the server's stdin pipe holds, written
// and not yet read.
func pipeHolds(t *testing.T, c *Conn) int {
	t.Helper()
	var n int32
	stdinPipe(t, c, syscall.SYS_IOCTL, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
	return int(n)
}

// A write cut off before its last byte, its newline, leaves a half line
// like any other cut: the connection ends with a *CutOffError naming
// what was written, a later write (go-sdk's cancellation notice) fails
// and sends nothing, and the server and its child are stopped, none left
// running or unreaped. The pipe is filled page by page so that the
// second line fits but for its newline.
func TestStdioCutAtLastByte(t *testing.T) {
	dir := t.TempDir()
	got, start := dir+"/stdin", dir+"/start"
	c := shConn(t, `sleep 30 </dev/null >/dev/null 2>&1 & echo "child $!" >&2
`+gatedCat(start, got))
	c.grace = 100 * time.Millisecond
	pipe, page := pipeSize(t, c), os.Getpagesize()
	if err := c.Write(t.Context(), sizedRequest(t, 1, pipe-page)); err != nil {
		t.Fatalf("the first line: %v", err)
	}
	size := page + 1
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	err := c.Write(ctx, sizedRequest(t, 2, size))
	var co *CutOffError
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &co) || co.Written != size-1 || co.Size != size {
		t.Fatalf("Write: %v, want a *CutOffError after %d of %d bytes, wrapping DeadlineExceeded", err, size-1, size)
	}
	if err := c.ReadError(); !errors.As(err, &co) || co.Written != size-1 || co.Size != size {
		t.Fatalf("ReadError: %v, want a *CutOffError after %d of %d bytes", err, size-1, size)
	}
	if err := os.WriteFile(start, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(t.Context(), &jsonrpc.Request{Method: "notifications/cancelled", Params: []byte(`{"requestId":2}`)}); !errors.As(err, &co) {
		t.Errorf("a write after the cut: %v, want a *WriteError saying the connection was cut off", err)
	}
	var child int
	for _, l := range c.Stderr() {
		fmt.Sscanf(l, "child %d", &child)
	}
	leader := c.proc.cmd.Process.Pid
	_ = c.Close()
	if syscall.Kill(leader, 0) == nil {
		t.Errorf("the server %d is still there after Close", leader)
	}
	if child == 0 {
		t.Error("the server did not report its child")
	} else if syscall.Kill(child, 0) == nil && !zombie(child) {
		t.Errorf("the server's child %d is still running", child)
	}
	data, err := os.ReadFile(got)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("notifications/cancelled")) {
		t.Errorf("the server got a message after the cut line")
	}
	if len(data) > 0 {
		checkLines(t, data)
	}
	t.Logf("pipe %d bytes, page %d: cut after %d of %d bytes; the server read %d bytes", pipe, page, co.Written, co.Size, len(data))
}

// A line cut off while Close is under way (it has begun, and has not yet
// made writers give up) is followed by nothing either: the next writer
// does not take its turn to write after the half line. The line is cut in
// the middle however slowly the test runs: the server reads nothing, the
// line is twice the pipe's size, and its write's context ends once the
// pipe holds part of it. Then the server reads everything: only the half
// line.
func TestStdioNothingFollowsACutLineWhileClosing(t *testing.T) {
	dir := t.TempDir()
	got, start := dir+"/stdin", dir+"/start"
	c := shConn(t, gatedCat(start, got))
	c.mu.Lock()
	c.closing = true // what Close does first
	c.mu.Unlock()
	msg := sizedRequest(t, 1, 2*pipeSize(t, c))
	line, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	done := make(chan error, 1)
	go func() { done <- c.Write(ctx, msg) }()
	for deadline := time.Now().Add(10 * time.Second); pipeHolds(t, c) == 0; { // a hang guard
		if time.Now().After(deadline) {
			t.Fatal("the write put nothing in the pipe")
		}
		time.Sleep(time.Millisecond)
	}
	cancel(errors.New("the call ended"))
	select {
	case err = <-done:
	case <-time.After(10 * time.Second): // a hang guard
		t.Fatal("the cut write did not return")
	}
	var co *CutOffError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &co) || co.Written == 0 || co.Written >= co.Size {
		t.Fatalf("Write: %v, want a *CutOffError in the middle of the line, wrapping Canceled", err)
	}
	if err := os.WriteFile(start, nil, 0o600); err != nil { // the server reads from now on
		t.Fatal(err)
	}
	next, nextCancel := context.WithTimeout(t.Context(), 10*time.Second) // a hang guard
	defer nextCancel()
	var we *WriteError
	if err := c.Write(next, &jsonrpc.Request{Method: "notifications/initialized"}); !errors.As(err, &we) {
		t.Errorf("a write after the cut line: %v, want a *WriteError (the connection is closed)", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) { // a hang guard
		if fi, err := os.Stat(got); err == nil && fi.Size() >= int64(co.Written) || time.Now().After(deadline) {
			break
		}
	}
	_ = c.Close()
	data, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, line[:co.Written]) {
		t.Errorf("the server read %d bytes, %d after the last newline, ending %q; want the %d bytes of the cut line and nothing else",
			len(data), len(data)-1-bytes.LastIndexByte(data, '\n'), data[max(0, len(data)-80):], co.Written)
	}
	t.Logf("cut after %d of %d bytes; the server read %d bytes", co.Written, co.Size, len(data))
}

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
i=0; while [ ! -e '`+start+`' ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done; exec cat > '`+got+`'`)
	c.grace = 100 * time.Millisecond
	rc, err := c.proc.stdin.SyscallConn() // not Fd, which would make the pipe block
	if err != nil {
		t.Fatal(err)
	}
	var pipe uintptr
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		pipe, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, 1032 /* F_GETPIPE_SZ */, 0)
	}); err != nil || errno != 0 {
		t.Fatal(err, errno)
	}
	page := os.Getpagesize()
	if err := c.Write(t.Context(), sizedRequest(t, 1, int(pipe)-page)); err != nil {
		t.Fatalf("the first line: %v", err)
	}
	size := page + 1
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	err = c.Write(ctx, sizedRequest(t, 2, size))
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

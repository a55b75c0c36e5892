//go:build unix

package stdio

import (
	"os"
	"syscall"
)

// stdinWriter writes to the server's stdin without ever waiting. Writers
// take turns (Conn.writing), so one is enough per connection.
type stdinWriter struct {
	rc    syscall.RawConn // nil: not possible
	write func(fd uintptr) bool
	data  []byte // what write writes
	n     int    // what it wrote
}

func newStdinWriter(f *os.File) *stdinWriter {
	rc, err := f.SyscallConn()
	if err != nil {
		return &stdinWriter{}
	}
	w := &stdinWriter{rc: rc}
	// Made once: a closure made per write would be allocated per write.
	w.write = func(fd uintptr) bool {
		if m, err := syscall.Write(int(fd), w.data); err == nil && m > 0 {
			w.n = m
		}
		return true // done, whatever happened: no waiting here
	}
	return w
}

// try writes as much of data as the pipe takes now (a line of up to 4 KiB
// goes whole or not at all) and returns how many bytes that was. It
// never waits: a full pipe, a deadline that has passed, an interrupted
// write or any error write 0 bytes, and the caller's ordinary write then
// does the rest and reports what went wrong. The caller has the turn to
// write.
func (w *stdinWriter) try(data []byte) int {
	if w.rc == nil {
		return 0
	}
	w.data, w.n = data, 0
	_ = w.rc.Write(w.write)
	w.data = nil
	return w.n
}

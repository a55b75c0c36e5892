//go:build unix

package stdio

import (
	"os"
	"syscall"
)

// stdinWriter writes to the server's stdin without ever waiting.
type stdinWriter struct {
	rc syscall.RawConn // nil: not possible
}

func newStdinWriter(f *os.File) stdinWriter {
	rc, err := f.SyscallConn()
	if err != nil {
		return stdinWriter{}
	}
	return stdinWriter{rc: rc}
}

// try writes as much of data as the pipe takes now (a line of up to 4 KiB
// goes whole or not at all) and returns how many bytes that was. It
// never waits: a full pipe, a deadline that has passed, an interrupted
// write or any error write 0 bytes, and the caller's ordinary write then
// does the rest and reports what went wrong.
func (w stdinWriter) try(data []byte) int {
	if w.rc == nil {
		return 0
	}
	n := 0
	_ = w.rc.Write(func(fd uintptr) bool {
		if m, err := syscall.Write(int(fd), data); err == nil && m > 0 {
			n = m
		}
		return true // done, whatever happened: no waiting here
	})
	return n
}

//go:build !linux

package testdb

import "syscall"

// serverAttr runs a server in the test's process group.
func serverAttr(bool) *syscall.SysProcAttr { return nil }

// chownForServer does nothing: the server runs as the test's user.
func chownForServer(string) error { return nil }

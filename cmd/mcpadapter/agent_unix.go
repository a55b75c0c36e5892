//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/cmdline"
)

// runAgent replaces this process with the agent program: its standard
// streams, signals (Ctrl-C) and exit status are the agent's own, and no
// mcpadapter process is left behind to outlive or orphan it. It returns
// only when the program cannot be started.
func runAgent(path string, args []string, _ *cmdline.App) (int, error) {
	argv := append([]string{path}, args...)
	var err error
	for try := range 4 {
		err = syscall.Exec(path, argv, os.Environ())
		// A concurrent "go build" of the workspace's agent may be writing
		// the binary just now.
		if !errors.Is(err, syscall.ETXTBSY) && !errors.Is(err, syscall.ENOENT) {
			break
		}
		time.Sleep(100 * time.Millisecond << try)
	}
	return cmdline.ExitFailure, fmt.Errorf("running %s: %w", path, err)
}

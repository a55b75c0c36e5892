//go:build !unix

package main

import (
	"errors"
	"fmt"
	"os/exec"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/cmdline"
)

// runAgent runs the agent program on this program's standard streams and
// returns its exit status. Ctrl-C reaches it from the console; this
// process, which catches the interrupt (main), waits for it to end.
func runAgent(path string, args []string, a *cmdline.App) (int, error) {
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = a.Stdin, a.Stdout, a.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return cmdline.ExitFailure, fmt.Errorf("running %s: %w", path, err)
	}
	return cmdline.ExitOK, nil
}

package main

import "os/exec"

// commandOf returns the command that runs the test server with flags.
func commandOf(server string, flags ...string) *exec.Cmd {
	return exec.Command(server, flags...)
}

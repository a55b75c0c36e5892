//go:build !unix

package stdio

import (
	"os/exec"
	"syscall"
)

func setProcAttr(*exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process != nil && sig == syscall.SIGKILL {
		_ = cmd.Process.Kill()
	}
}

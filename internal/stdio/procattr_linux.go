package stdio

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the child in its own process group and asks the kernel
// to kill it when the thread that started it dies (the Go runtime does not
// end threads that goroutines were not locked to, so in practice: when this
// process dies, even by SIGKILL).
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, sig)
	}
}

//go:build unix

package testserver

import (
	"bufio"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSpawnGrandchild(t *testing.T) {
	t.Parallel()
	cmd := Command(t, "-hang", "-spawn-grandchild", "-stderr", "1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	r := bufio.NewReader(stderr)
	var pid int
	for i := 0; i < 2; i++ {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "grandchild pid ") {
			fmt.Sscanf(line, "grandchild pid %d", &pid)
		}
	}
	if pid == 0 {
		t.Fatal("no grandchild pid announced")
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("grandchild %d not running: %v", pid, err)
	}
	// Killing the process group reaches the grandchild.
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		// The grandchild is reparented to init (or a subreaper) when killed;
		// it may linger as a zombie until reaped, so check its state too.
		if isZombie(pid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d survived the process-group kill", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

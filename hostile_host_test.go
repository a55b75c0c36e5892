//go:build linux

package mcpadapter_test

// Server processes never outlive their host: after
// kill -9 of a host process, no process of the server's tree is left,
// neither a server's own child nor the real server behind an sh -c
// wrapper; and when Close returns, the whole process group is gone.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// hostModeEnv selects the command TestHostileHostHelper runs as a host.
const hostModeEnv = "MCPADAPTER_TEST_HOST_MODE"

// hostCommand returns the server command a host runs in mode: the test
// server starting a child of its own, directly or behind sh -c (which
// forks it, as npx's shell wrapper does). Once its pid tool is called the
// server reads no more stdin, so the end of stdin does not stop it.
func hostCommand(bin, mode string) mcpadapter.Command {
	flags := []string{"-spawn-grandchild", "-stop-reading", "pid"}
	if mode == "sh" {
		return mcpadapter.Command{Path: "/bin/sh", Args: append([]string{"-c", `"$0" "$@"; exit $?`, bin}, flags...)}
	}
	return mcpadapter.Command{Path: bin, Args: flags}
}

// TestHostileHostHelper is not a test: run by TestHostileHostKilled with
// hostModeEnv set, it is a host that connects to a server, says "ready"
// and waits to be killed.
func TestHostileHostHelper(t *testing.T) {
	mode := os.Getenv(hostModeEnv)
	if mode == "" {
		t.Skip("a helper process for TestHostileHostKilled")
	}
	c, err := mcpadapter.NewClient(hostCommand(testserver.Build(t), mode), &mcpadapter.ClientOptions{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(context.Background(), "pid", nil, nil); err != nil {
		t.Fatal(err)
	}
	fmt.Println("ready")
	time.Sleep(time.Minute) // killed long before
}

// procStat returns the state and parent pid of pid from /proc.
func procStat(pid int) (state byte, ppid int, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+1:])
	if i < 0 || len(f) < 2 {
		return 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	return f[0][0], ppid, true
}

// descendants returns every process below pid, from /proc.
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, ppid, ok := procStat(p); ok {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []int
	for next := []int{pid}; len(next) > 0; {
		p := next[0]
		next = append(next[1:], children[p]...)
		out = append(out, children[p]...)
	}
	return out
}

func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}

// kill -9 of the host leaves no process of its servers' trees running:
// a server's own child, and the real server behind an sh -c wrapper.
func TestHostileHostKilled(t *testing.T) {
	bin := testserver.Build(t)
	for _, mode := range []string{"direct", "sh"} {
		t.Run(mode, func(t *testing.T) {
			host := exec.Command(os.Args[0], "-test.run=^TestHostileHostHelper$", "-test.count=1")
			host.Env = append(os.Environ(), hostModeEnv+"="+mode, "MCPTESTSERVER_BIN="+bin)
			out, err := host.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = host.Process.Kill(); _ = host.Wait() })
			ready := make(chan bool, 1)
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					if sc.Text() == "ready" {
						ready <- true
					}
				}
				close(ready)
			}()
			select {
			case ok := <-ready:
				if !ok {
					t.Fatal("the host exited before it was ready")
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the host was not ready within 30 s")
			}
			tree := descendants(host.Process.Pid)
			var names []string
			for _, p := range tree {
				names = append(names, fmt.Sprintf("%d %s", p, cmdline(p)))
			}
			t.Logf("the host's tree:\n  %s", strings.Join(names, "\n  "))
			if len(tree) < 2 {
				t.Fatalf("want the server and its child below the host, got %q", names)
			}
			t.Cleanup(func() {
				for _, p := range tree {
					_ = syscall.Kill(p, syscall.SIGKILL)
				}
			})
			killed := time.Now()
			if err := host.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = host.Wait()
			var left []string
			for deadline := time.Now().Add(5 * time.Second); ; {
				left = left[:0]
				for _, p := range tree {
					if !processGone(p) {
						left = append(left, fmt.Sprintf("%d %s", p, cmdline(p)))
					}
				}
				if len(left) == 0 || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if len(left) > 0 {
				t.Fatalf("5 s after kill -9 of the host, %d of its %d processes are still running:\n  %s", len(left), len(tree), strings.Join(left, "\n  "))
			}
			t.Logf("HOSTILE host-killed mode=%s processes=%d all_gone_ms=%d processes_left=0", mode, len(tree), time.Since(killed).Milliseconds())
		})
	}
}

// When Close returns, the server's whole process group is gone, even a
// server that reads no more stdin and, like its child, ignores SIGTERM:
// a host that exits right after Close leaves nothing behind.
func TestHostileCloseWaitsForGroup(t *testing.T) {
	ctx := testCtx(t)
	onStderr, grandchild := grandchildPID()
	c := deafClient(t, ctx, "stubborn", "pid", &mcpadapter.ClientOptions{StderrHandler: onStderr}, "-ignore-sigterm", "-spawn-grandchild")
	pid := serverPID(t, ctx, c)
	var child int
	select {
	case child = <-grandchild:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not report its child")
	}
	took := within(t, 15*time.Second, "Close", func() { _ = c.Close() })
	for _, p := range []int{pid, child} {
		if !processGone(p) {
			t.Errorf("process %d (%s) is still running when Close returns", p, cmdline(p))
		}
	}
	t.Logf("HOSTILE close-waits close_ms=%d processes_left=0", took.Milliseconds())
}

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/clitest"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestServeReloadUntrustedAtTerminal: `serve --watch-config` at a
// terminal, on a project config the user trusted. The repository then
// changes the file (a checkout, a pull): the new content is not trusted,
// so it is refused, naming why and how to trust it, without a question
// on the terminal (a question would take the terminal's input from
// under the running gateway, and wait for it: serve could then not stop
// until someone typed a line). Nothing of the new config runs, and
// Ctrl-C still stops serve.
func TestServeReloadUntrustedAtTerminal(t *testing.T) {
	l := startListener(t)
	root := t.TempDir()
	proj := filepath.Join(root, "checkout")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + root, "XDG_CONFIG_HOME=" + filepath.Join(root, ".config"), "AWS_SECRET_ACCESS_KEY=" + awsSecret, "GITHUB_TOKEN=" + githubToken}
	srv := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "web"}), testserver.Stateless())
	writeConfig(t, proj, ".mcp.json", fmt.Sprintf(`{"mcpServers": {"web": {"url": %q}}}`, srv.URL))
	cliEnv(t, proj, env, "trust").Must(t, 0, []string{"Trusted .mcp.json"}, nil)

	term := clitest.Tmux(t, root, filepath.Dir(bin), "cd checkout && env "+strings.Join(env, " ")+" mcpadapter serve --listen 127.0.0.1:0 --watch-config; echo SERVE-ENDED")
	term.WaitFor("listening on")
	writeConfig(t, proj, ".mcp.json", crafted(l.URL))
	sc := term.WaitFor("refused")
	term.WaitFor("mcpadapter trust")
	if strings.Contains(term.Screen(), "[y/N]") {
		t.Errorf("serve asked on the terminal while serving:\n%s", sc)
	}
	term.Send("C-c")
	term.WaitFor("SERVE-ENDED")
	checkUntouched(t, proj, l)
}

// TestServeReloadNotAFile: while `serve --watch-config` runs, its config
// is replaced by a link to /dev/zero, then by a FIFO nobody writes to:
// each is refused at once as not a regular file (nothing reads without
// end or waits for a writer), the servers stay, and a good config after
// them is taken. serve runs with its address space bounded.
func TestServeReloadNotAFile(t *testing.T) {
	srv := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "web"}), testserver.Stateless())
	home := t.TempDir()
	cfg := filepath.Join(home, "mcp.json")
	good := fmt.Sprintf(`{"mcpServers": {"web": {"url": %q}}}`, srv.URL)
	writeConfig(t, home, "mcp.json", good)
	cmd := exec.Command("/bin/sh", "-c", `ulimit -v 3145728 && exec "$0" "$@"`, bin, "serve", "--config", cfg, "--listen", "127.0.0.1:0", "--watch-config")
	cmd.Env = append(os.Environ(), "HOME="+home)
	out := &lineWaiter{t: t}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	out.waitFor("listening on", 1)
	swap := func(make func(tmp string) error) {
		t.Helper()
		tmp := cfg + ".new"
		if err := make(tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, cfg); err != nil {
			t.Fatal(err)
		}
	}
	for i, bad := range []func(string) error{
		func(tmp string) error { return os.Symlink("/dev/zero", tmp) },
		func(tmp string) error { return syscall.Mkfifo(tmp, 0o600) },
	} {
		swap(bad)
		out.waitFor("not a regular file", i+1)
		swap(func(tmp string) error { return os.WriteFile(tmp, []byte(good+strings.Repeat(" ", i+1)), 0o600) })
		out.waitFor("reloaded", i+1)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not stop on SIGTERM:\n%s", out.String())
	}
}

// lineWaiter collects a process's output and waits for what it says.
type lineWaiter struct {
	t  *testing.T
	mu sync.Mutex
	b  strings.Builder
}

func (w *lineWaiter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lineWaiter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// waitFor waits up to 30 s for the output to hold s n times.
func (w *lineWaiter) waitFor(s string, n int) {
	w.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); strings.Count(w.String(), s) < n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			w.t.Fatalf("the output never said %q %d times:\n%s", s, n, w.String())
		}
	}
}

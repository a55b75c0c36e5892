//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// running reports whether pid is a live process (a zombie is not).
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestServeKilledLeavesNoOrphans: `mcpadapter serve` with a stdio server
// behind a shell wrapper that also starts a child of its own, ended by
// SIGTERM and by SIGKILL: the server and its child end too.
func TestServeKilledLeavesNoOrphans(t *testing.T) {
	server := testserver.Build(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			script := fmt.Sprintf(`sleep 300 & echo $! > %s/grandchild; echo $$ > %s/child; exec %s -era legacy`, dir, dir, server)
			doc := fmt.Sprintf(`{"mcpServers": {"kid": {"command": "/bin/sh", "args": ["-c", %q]}}}`, script)
			cfg := filepath.Join(dir, "mcp.json")
			if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
				t.Fatal(err)
			}
			p := startServe(t, dir, nil, "--config", cfg, "--listen", "127.0.0.1:0")
			pids := map[string]int{}
			for _, name := range []string{"child", "grandchild"} {
				b, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				if pids[name], err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil || !running(pids[name]) {
					t.Fatalf("%s: %q, %v", name, b, err)
				}
			}
			_ = p.stop(sig)
			for name, pid := range pids {
				for deadline := time.Now().Add(20 * time.Second); running(pid); {
					if time.Now().After(deadline) {
						_ = syscall.Kill(pid, syscall.SIGKILL)
						t.Fatalf("the server's %s %d outlived serve (%s)", name, pid, sig)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
}

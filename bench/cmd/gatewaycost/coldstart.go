package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// coldServers is how many stdio servers the cold-start config has.
const coldServers = 10

// writeConfig writes an mcpServers config of n stdio test servers (named
// s01 …) to dir/name and returns its path.
func writeConfig(dir, name, server string, n int) (string, error) {
	servers := map[string]any{}
	for i := 1; i <= n; i++ {
		servers[fmt.Sprintf("s%02d", i)] = map[string]any{"command": server, "args": []string{"-minimal", "-name", fmt.Sprintf("s%02d", i)}}
	}
	b, err := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	return path, os.WriteFile(path, b, 0o600)
}

// coldCLI times `mcpadapter serve` from exec to a client holding the tools
// of all coldServers servers.
func coldCLI(ctx context.Context, kids *children, cli, config string, want int, hc *http.Client) (time.Duration, error) {
	start := time.Now()
	// --trust-config: the file is this run's own, not a project's.
	cmd := exec.Command(cli, "serve", "--trust-config", "--config", config, "--listen", "127.0.0.1:0", "--prefix", "always")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	line, err := kids.startListening(cmd, false, "listening on ", time.Minute)
	if err != nil {
		return 0, fmt.Errorf("%w; stderr: %.500s", err, stderr.String())
	}
	defer kids.stop(cmd)
	f := strings.Fields(line[strings.Index(line, "listening on "):])
	if len(f) < 3 {
		return 0, fmt.Errorf("serve printed %q", line)
	}
	return untilTools(ctx, start, endpoint{url: f[2]}, want, hc)
}

// untilTools lists the tools of ep until there are want of them (a
// minute at most) and returns the time since start.
func untilTools(ctx context.Context, start time.Time, ep endpoint, want int, hc *http.Client) (time.Duration, error) {
	deadline := start.Add(time.Minute)
	var last error
	got := 0
	for time.Now().Before(deadline) {
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		n, err := countTools(lctx, ep, era2025, hc)
		cancel()
		if err == nil && n >= want {
			return time.Since(start), nil
		}
		last, got = err, n
		time.Sleep(20 * time.Millisecond)
	}
	return 0, fmt.Errorf("%d of %d tools after a minute (last error: %v)", got, want, last)
}

// coldDirect times a client that connects to the coldServers servers
// itself, all at once, and lists their tools.
func coldDirect(ctx context.Context, server string) (time.Duration, error) {
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, coldServers)
	sessions := make([]*session, coldServers)
	for i := range coldServers {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			sessions[i], errs[i] = open(cctx, endpoint{stdio: []string{server, "-minimal", "-name", fmt.Sprintf("s%02d", i+1)}}, era2025, nil)
		})
	}
	wg.Wait()
	d := time.Since(start)
	for _, s := range sessions {
		if s != nil {
			wg.Go(s.close)
		}
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return 0, err
		}
	}
	return d, nil
}

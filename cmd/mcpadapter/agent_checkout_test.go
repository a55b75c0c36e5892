package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/clitest"
)

// TestAgentNotBuiltFromCheckout: "mcpadapter agent" run inside a
// checked-out repository whose go.mod names the agent's module (mcpadapter
// installed alone, no agent program anywhere) neither builds nor runs the
// repository's program: a checkout must not get code run by being the
// working directory.
func TestAgentNotBuiltFromCheckout(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	checkout := t.TempDir()
	pwned := filepath.Join(checkout, "PWNED")
	files := map[string]string{
		"go.mod": "module " + agentPackage + "\n\ngo 1.26\n",
		"main.go": `package main

import "os"

func main() { _ = os.WriteFile("PWNED", []byte("ran"), 0o644) }
`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(checkout, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lone := filepath.Join(t.TempDir(), "mcpadapter")
	if err := os.Link(bin, lone); err != nil {
		t.Fatal(err)
	}
	gocache, err := exec.Command(gobin, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	// XDG_CONFIG_HOME under /dev/null: the go command's telemetry cannot
	// make its directory, so no telemetry process of go's writes into the
	// test's directories after mcpadapter has exited.
	env := []string{
		"PATH=" + filepath.Dir(gobin), "GOWORK=", "GOFLAGS=", "GOTOOLCHAIN=local",
		"GOCACHE=" + string(gocache[:len(gocache)-1]), "XDG_CACHE_HOME=" + t.TempDir(),
		"XDG_CONFIG_HOME=" + filepath.Join(os.DevNull, "config"),
	}
	r := clitest.Run(t, lone, checkout, "", env, "agent", "--model", "m")
	if _, err := os.Stat(pwned); err == nil {
		t.Fatalf("the checkout's program was built and run:\n%s", r.Stderr)
	}
	r.Must(t, 2, nil, []string{"the agent command needs mcpadapter-agent"})
}

package testenv

import (
	"fmt"
	"os"
	"testing"
)

// EnvCI is set to "true" by CI systems (and .ci/run's callers); under it a
// missing prerequisite fails the test instead of skipping it.
const EnvCI = "CI"

// Missing reports that a prerequisite of the test (npm to install Node,
// tmux, ...) is missing. Locally the test is skipped with the reason, so
// that `go test ./...` on a fresh machine says what it did not run; under
// CI (CI=true) the test fails, so a CI run never passes by skipping.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(EnvCI) == "true" {
		t.Fatalf("%s (CI=true: a missing prerequisite fails the run)", msg)
		return
	}
	t.Skipf("%s (skipped: a missing prerequisite; with CI=true this fails)", msg)
}

// SkipShort skips a slow test (soak, floods, npm peers, long fault
// tests) under `go test -short`, saying what it does.
func SkipShort(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: skips %s", what)
	}
}

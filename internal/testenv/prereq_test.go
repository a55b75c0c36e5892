package testenv

import (
	"fmt"
	"testing"
)

// recorder is a testing.TB that records how a test ended.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}

// TestMissing: a missing prerequisite skips locally and fails under CI.
func TestMissing(t *testing.T) {
	t.Setenv(EnvCI, "")
	local := &recorder{TB: t}
	Missing(local, "tmux is needed")
	if local.skipped == "" || local.failed != "" {
		t.Errorf("locally: skipped %q, failed %q; want a skip", local.skipped, local.failed)
	}
	t.Setenv(EnvCI, "true")
	ci := &recorder{TB: t}
	Missing(ci, "tmux is needed")
	if ci.failed == "" || ci.skipped != "" {
		t.Errorf("under CI=true: skipped %q, failed %q; want a failure", ci.skipped, ci.failed)
	}
	t.Logf("locally: %s\nCI: %s", local.skipped, ci.failed)
}

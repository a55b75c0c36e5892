package main

import (
	"strings"
	"testing"
)

// TestToolsFailingServerStderrRedacted: `mcpadapter tools` against a
// stdio server that prints a bearer token to stderr (its last line) and
// a header folded over two lines, then exits: the one-line error quotes
// the last stderr line with the token hidden, and --verbose's full
// error shows none of them.
func TestToolsFailingServerStderrRedacted(t *testing.T) {
	script := `echo "X-Api-Key:" >&2; echo "  S3CR-01" >&2; echo "Authorization: Bearer S3CR-02" >&2; exit 3`
	for _, args := range [][]string{
		{"tools", "--", "/bin/sh", "-c", script},
		{"tools", "--verbose", "--", "/bin/sh", "-c", script},
	} {
		r := cli(t, "", args...)
		r.Must(t, 2, nil, []string{"Authorization: Bearer [REDACTED]"})
		if strings.Contains(r.Stdout+r.Stderr, "S3CR") {
			t.Errorf("%v shows a secret:\n%s", args, r.Stderr)
		}
	}
}

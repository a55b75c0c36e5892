package main

import (
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestCallShowsResultsAsSent: call prints structured content as the server
// wrote it (member order, integers beyond float64), and a content block of
// a type this version does not know as a placeholder, not a failure.
func TestCallShowsResultsAsSent(t *testing.T) {
	server := testserver.Build(t)
	r := cli(t, "", "call", "precise", "--", server)
	r.Must(t, 0, []string{"structured content:", `"z": 1`, `"id": 12345678901234567890`, `"a": 9007199254740993`}, nil)
	if z, id, a := strings.Index(r.Stdout, `"z"`), strings.Index(r.Stdout, `"id"`), strings.Index(r.Stdout, `"a"`); z > id || id > a {
		t.Errorf("members reordered:\n%s", r.Stdout)
	}
	cli(t, "", "call", "hologram", "--", server).Must(t, 0,
		[]string{testserver.HologramText, `["hologram" content, not shown: this client does not support the type]`}, nil)
}

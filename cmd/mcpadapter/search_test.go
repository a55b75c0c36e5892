package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestToolsSearch: `tools --search` prints the best matches with their
// scores, best first, and says how big the catalog is.
func TestToolsSearch(t *testing.T) {
	url := testserver.ServeStreamable(t, testserver.New(testserver.Options{}), testserver.Stateless())
	r := cli(t, "", "tools", url, "--search", "add two numbers", "--limit", "2")
	r.Must(t, 0, []string{"tools indexed, about ", "under the default tool-search threshold (10000)", "RANK  SCORE", "Add two numbers."}, nil)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != 4 || !strings.HasPrefix(strings.Join(strings.Fields(lines[2]), " "), "1 ") || strings.Fields(lines[2])[2] != "add" {
		t.Fatalf("want a header, a column line and 2 matches, add first:\n%s", r.Stdout)
	}
	r = cli(t, "", "tools", url, "--search", "add two numbers", "--json")
	var hits []struct {
		Name  string  `json:"name"`
		Score float64 `json:"score"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &hits); err != nil || len(hits) == 0 || hits[0].Name != "add" || hits[0].Score <= 0 {
		t.Fatalf("--json: %v\n%s", err, r.Stdout)
	}
	cli(t, "", "tools", url, "--search", "qwertyuiop").Must(t, 0, []string{`no tool matches "qwertyuiop"`}, nil)
	cli(t, "", "tools", url, "--search", " ").Must(t, 2, nil, []string{"--search: the query is empty"})
}

package searchpair

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPartitionsForgetLeastRecent checks that a partition is kept while
// it is asked for, and that the one asked for least recently goes first.
func TestPartitionsForgetLeastRecent(t *testing.T) {
	p := Partitions[int]{Max: 2}
	*p.Of("a") = 1
	*p.Of("b") = 2
	if *p.Of("a") != 1 { // a is now the most recent
		t.Fatal("a forgotten while under Max")
	}
	*p.Of("c") = 3 // forgets b
	if got := *p.Of("a"); got != 1 {
		t.Errorf("a = %d, want 1: the least recent (b) should have gone", got)
	}
	if got := *p.Of("b"); got != 0 {
		t.Errorf("b = %d, want a new zero partition", got)
	}
	if len(p.m) != 2 {
		t.Errorf("%d partitions, want 2", len(p.m))
	}
}

// TestRemoved checks that tools gone from a listing are remembered with
// their server until they come back.
func TestRemoved(t *testing.T) {
	server := func(s string) string { return s }
	old := map[string]string{"a": "s1", "b": "s2"}
	now := map[string]string{"a": "s1"}
	got := Removed(old, now, map[string]string{"c": "s3", "a": "s1"}, server)
	if len(got) != 2 || got["b"] != "s2" || got["c"] != "s3" {
		t.Errorf("Removed = %v, want b (s2) and c (s3), not a", got)
	}
}

// TestAnswer checks search_tools' answer: descriptions on one line, an
// invalid schema as null, and the note only when nothing fits.
func TestAnswer(t *testing.T) {
	m := []Match{{Name: "t", Description: " first\nsecond", InputSchema: json.RawMessage(`{"x"`)}}
	text, err := Answer(m, true)
	if err != nil || text != `{"tools":[{"name":"t","description":"first","input_schema":null}]}` {
		t.Fatalf("Answer = %s, %v", text, err)
	}
	if text, _ := Answer(m, false); !strings.HasPrefix(text, `{"note":"No tool fits this well`) {
		t.Errorf("no fit: %s", text)
	}
	if got := NoMatch("q", 3, []string{"b", "a", "b"}); got != `No tool matches "q"; try other words. The catalog has 3 tools from a, b.` {
		t.Errorf("NoMatch = %q", got)
	}
	if got := OneLine(strings.Repeat("é", 150)); len(got) != 203 || !strings.HasSuffix(got, "...") {
		t.Errorf("OneLine cut %d bytes: %q", len(got), got)
	}
}

func TestNotObject(t *testing.T) {
	for args, want := range map[string]bool{"": false, " null ": false, `{"a":1}`: false, `[1]`: true, `"s"`: true, `1`: true} {
		if got := NotObject(json.RawMessage(args)); got != want {
			t.Errorf("NotObject(%q) = %v, want %v", args, got, want)
		}
	}
}

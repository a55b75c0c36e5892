package toolsearch

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTokenize(t *testing.T) {
	for in, want := range map[string][]string{
		"create_issue":                 {"creat", "issu"},
		"createPullRequest":            {"creat", "pull", "request"},
		"created, creating, creates":   {"creat", "creat", "creat"},
		"get-weather-forecast":         {"get", "weather", "forecast"},
		"HTTPServerStatus":             {"http", "server", "status"},
		"listIssues2Repos":             {"list", "issu", "2", "repo"},
		"Search the queries, please!":  {"search", "query"},
		"stopped watching the matches": {"stop", "watch", "match"},
		"":                             nil,
		"\xff\xfeabc":                  {"abc"},
	} {
		if got := Tokenize(in); !slices.Equal(got, want) {
			t.Errorf("Tokenize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSearchRanksNameOverDescription(t *testing.T) {
	ix := New([]Doc{
		{ID: "a", Name: "list_files", Description: "List the files of a directory."},
		{ID: "b", Name: "delete_issue", Description: "Delete an issue; it cannot be listed after."},
		{ID: "c", Name: "create_issue", Description: "Open a new issue in a repository.",
			Args: []Arg{{Name: "repo", Description: "owner/name"}, {Name: "title"}}},
	})
	hits := ix.Search("open an issue on my repo", 2)
	if len(hits) == 0 || hits[0].ID != "c" {
		t.Fatalf("Search: %v, want c first", hits)
	}
	if hits := ix.Search("remove issue", 1); len(hits) != 1 || hits[0].ID != "b" {
		t.Fatalf("synonym remove→delete: %v, want b", hits)
	}
	if hits := ix.Search("zebra", 5); len(hits) != 0 {
		t.Fatalf("no shared word: %v, want none", hits)
	}
	if hits := (*Index)(nil).Search("x", 1); hits != nil {
		t.Fatalf("nil index: %v", hits)
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"create_issue", "HTTPServer2Go", "a-b.c d", "\xff", "ÉtéÀParis", strings.Repeat("x", 200)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks := Tokenize(s)
		for _, tok := range toks {
			if tok == "" || len(tok) > maxTokenBytes || !utf8.ValidString(tok) {
				t.Fatalf("Tokenize(%q): bad token %q", s, tok)
			}
		}
		ix := New([]Doc{{ID: "x", Name: s, Description: s, Args: []Arg{{Name: s}}}})
		for _, h := range ix.Search(s, 3) {
			if h.ID != "x" || h.Score <= 0 {
				t.Fatalf("Search(%q): %v", s, h)
			}
		}
	})
}

// BenchmarkNew indexes 1,000 tools of about the size of real ones.
func BenchmarkNew(b *testing.B) {
	docs := make([]Doc, 1000)
	for i := range docs {
		docs[i] = Doc{ID: strings.Repeat("x", i%7), Name: "create_pull_request_" + string(rune('a'+i%26)),
			Description: "Create a new pull request (proposed code changes to merge from one branch into another) with the given fields and return it.",
			Args:        []Arg{{Name: "head", Description: "The branch with the changes."}, {Name: "base", Description: "The branch to merge into."}}}
	}
	b.ReportAllocs()
	for b.Loop() {
		New(docs)
	}
}

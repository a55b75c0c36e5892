package skillmd

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEntryCheck checks the listing rules: a uri, a name, and a size and
// a sha256 digest for every file, SKILL.md among them.
func TestEntryCheck(t *testing.T) {
	const good = `{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"does a"},
		"resources":[{"uri":"skill://a/SKILL.md","digest":"sha256:00","size":3},{"uri":"skill://a/x.py","digest":"SHA256:11","size":0}]}`
	for _, c := range []struct{ entry, err string }{
		{good, ""},
		{`{"frontmatter":{"name":"a"}}`, "no uri"},
		{`{"uri":"u","frontmatter":{"description":"d"}}`, "no frontmatter name"},
		{`{"uri":"u","frontmatter":{"name":"a"},"resources":[{"uri":"u","digest":"sha256:00"}]}`, "resources[0]"},
		{`{"uri":"u","frontmatter":{"name":"a"},"resources":[{"uri":"u","digest":"md5:00","size":1}]}`, "resources[0]"},
		{`{"uri":"u","frontmatter":{"name":"a"},"resources":[{"uri":"u","digest":"sha256:00","size":-1}]}`, "resources[0]"},
		{`{"uri":"u","frontmatter":{"name":"a"},"resources":[{"uri":"v","digest":"sha256:00","size":1}]}`, "not among its resources"},
	} {
		var e Entry
		if err := json.Unmarshal([]byte(c.entry), &e); err != nil {
			t.Fatal(err)
		}
		l, err := e.Check()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err = %v, want %q", c.entry, err, c.err)
			}
			continue
		}
		if err != nil || l.Name != "a" || l.Description != "does a" || len(l.Files) != 2 || l.Files[0].Size != 3 || l.Files[1].URI != "skill://a/x.py" {
			t.Errorf("good entry: %+v, %v", l, err)
		}
	}
}

// TestResourceBytes checks that exactly one content of the uri (or with
// none) is taken, a blob as it is and text as UTF-8.
func TestResourceBytes(t *testing.T) {
	res := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "a", Text: "hi"}, {URI: "b", Blob: []byte{1}}, nil}}
	if b, err := ResourceBytes(res, "a"); err != nil || string(b) != "hi" {
		t.Errorf("a: %q, %v", b, err)
	}
	if b, err := ResourceBytes(res, "b"); err != nil || len(b) != 1 {
		t.Errorf("b: %q, %v", b, err)
	}
	if _, err := ResourceBytes(res, "c"); err == nil {
		t.Error("c: no error for a missing content")
	}
	res.Contents = append(res.Contents, &mcp.ResourceContents{Text: "again"})
	if _, err := ResourceBytes(res, "a"); err == nil || !strings.Contains(err.Error(), "2 contents") {
		t.Errorf("two contents: err = %v", err)
	}
}

// TestList follows the cursors page by page, stops at the first entry
// that fails its check (its place in its page), returns a page's error as
// is, and refuses a listing that never ends.
func TestList(t *testing.T) {
	entry := func(name string) Entry {
		var e Entry
		if err := json.Unmarshal([]byte(`{"uri":"skill://`+name+`/SKILL.md","frontmatter":{"name":"`+name+`","description":"d"},
			"resources":[{"uri":"skill://`+name+`/SKILL.md","digest":"sha256:00","size":3}]}`), &e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	pages := map[string]*ListResult{
		"":   {Skills: []Entry{entry("a")}, NextCursor: "p2"},
		"p2": {Skills: []Entry{entry("b"), entry("c")}},
	}
	got, err := List(t.Context(), func(_ context.Context, cursor string) (*ListResult, error) { return pages[cursor], nil })
	if err != nil || len(got) != 3 || got[0].Name != "a" || got[2].Name != "c" {
		t.Fatalf("List = %v, %v; want a, b, c", got, err)
	}

	pages["p2"].Skills[1].URI = ""
	_, err = List(t.Context(), func(_ context.Context, cursor string) (*ListResult, error) { return pages[cursor], nil })
	var ee *EntryError
	if !errors.As(err, &ee) || ee.Index != 1 || ee.Name != "c" || !strings.HasPrefix(err.Error(), "skills[1]: ") {
		t.Fatalf("List with a bad entry = %v, want an *EntryError for skills[1] (c)", err)
	}

	refused := errors.New("refused")
	if _, err := List(t.Context(), func(context.Context, string) (*ListResult, error) { return nil, refused }); err != refused {
		t.Fatalf("List with a failing page = %v, want the page's error as is", err)
	}

	n := 0
	_, err = List(t.Context(), func(context.Context, string) (*ListResult, error) {
		n++
		return &ListResult{NextCursor: "again"}, nil
	})
	if err == nil || !strings.Contains(err.Error(), "more than 100 pages") || n != MaxListPages {
		t.Fatalf("List of an endless listing = %v after %d pages, want an error after %d", err, n, MaxListPages)
	}
}

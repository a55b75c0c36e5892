package skillmd

import (
	"encoding/json"
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

package skillmd

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	got, err := Parse(`name: pdf-processing
description: "Extract, fill: and \"assemble\""
license: 'it''s MIT'
version: 2
beta: true
none: ~
allowed-tools: [Read, Write]
metadata:
  owner: docs-team
  tags:
    - pdf
    - forms
# a comment
`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"name": "pdf-processing", "description": `Extract, fill: and "assemble"`, "license": "it's MIT",
		"version": 2.0, "beta": true, "none": nil, "allowed-tools": []any{"Read", "Write"},
		"metadata": map[string]any{"owner": "docs-team", "tags": []any{"pdf", "forms"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
}

func TestParseRefuses(t *testing.T) {
	for _, src := range []string{
		"a: &anchor x", "a: *ref", "a: |\n  block", "a: {b: 1}", "a: 1\na: 2", "  a: 1", "a: \"open",
		"- item", "a:\n  - b: c", "a: !tag x", "just text",
	} {
		if m, err := Parse(src); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", src, m)
		}
	}
}

func TestCheckFrontmatter(t *testing.T) {
	doc := "---\nname: s\ndescription: Does things\n---\nBody\n"
	if err := CheckFrontmatter(doc, map[string]any{"name": "s", "description": "Does things"}); err != nil {
		t.Error(err)
	}
	for _, listed := range []map[string]any{
		{"name": "s", "description": "Does other things"},
		{"name": "s"},
		{"name": "s", "description": "Does things", "license": "MIT"},
	} {
		if err := CheckFrontmatter(doc, listed); err == nil || !strings.Contains(err.Error(), "frontmatter mismatch") {
			t.Errorf("listed %v: %v", listed, err)
		}
	}
	if err := CheckFrontmatter("no frontmatter", map[string]any{}); err == nil {
		t.Error("a SKILL.md without frontmatter passed")
	}
}

func TestCheckSizeDigest(t *testing.T) {
	c := []byte("hello\n")
	const d = "sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
	if CheckSize(c, 6) != nil || CheckDigest(c, d) != nil || CheckDigest(c, strings.ToUpper(d[7:])) == nil {
		t.Error("size/digest of a matching file")
	}
	if CheckSize(c, 7) == nil || CheckDigest(c, "sha256:00") == nil || CheckDigest(c, "md5:abc") == nil {
		t.Error("a mismatch passed")
	}
}

// FuzzParse: no input panics the frontmatter parser or the comparison,
// and what Parse accepts compares equal with itself.
func FuzzParse(f *testing.F) {
	f.Add("name: a\ndescription: b\n")
	f.Add("a:\n  b:\n    - c\n    - 'd'\n")
	f.Add("x: [1, \"2\", true]\ny: ~\n")
	f.Add("k: \"esc \\n \\\" \\\\\"\n")
	f.Fuzz(func(t *testing.T, src string) {
		m, err := Parse(src)
		if err != nil {
			return
		}
		doc := "---\n" + src + "\n---\n"
		if err := CheckFrontmatter(doc, m); err != nil && !strings.Contains(src, "---") {
			t.Errorf("parsed %q to %v, which does not compare equal with itself: %v", src, m, err)
		}
	})
}

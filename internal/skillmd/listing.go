package skillmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ListMethod is the skills extension's listing request.
const ListMethod = "skills/list"

// ListParams and ListResult are skills/list on the wire, for go-sdk's
// custom methods.
type ListParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// ListResult is one page of skills/list.
type ListResult struct {
	mcp.ResultBase
	Skills     []Entry `json:"skills"`
	NextCursor string  `json:"nextCursor,omitempty"`
}

// Entry is one skill as skills/list sends it.
type Entry struct {
	URI         string         `json:"uri"`
	Frontmatter map[string]any `json:"frontmatter"`
	Resources   []struct {
		URI    string `json:"uri"`
		Digest string `json:"digest"`
		Size   *int64 `json:"size"`
	} `json:"resources"`
}

// Listed is an entry that passed Entry.Check.
type Listed struct {
	URI, Name, Description string
	Frontmatter            map[string]any
	Files                  []File
}

// File is one file of a listed skill, with the digest and size its
// content must have.
type File struct {
	URI    string
	Digest string // "sha256:" and hex
	Size   int64  // bytes
}

// Name is the entry's frontmatter name, or "".
func (e *Entry) Name() string {
	n, _ := e.Frontmatter["name"].(string)
	return n
}

// Check checks an entry: a SKILL.md URI, a name, and a digest and size
// for every file, SKILL.md among them.
func (e *Entry) Check() (*Listed, error) {
	if e.URI == "" {
		return nil, errors.New("no uri")
	}
	s := &Listed{URI: e.URI, Name: e.Name(), Frontmatter: e.Frontmatter}
	s.Description, _ = e.Frontmatter["description"].(string)
	if s.Name == "" {
		return nil, errors.New("no frontmatter name")
	}
	listed := false
	for i, r := range e.Resources {
		if r.URI == "" || r.Size == nil || *r.Size < 0 || !strings.HasPrefix(strings.ToLower(r.Digest), "sha256:") {
			return nil, fmt.Errorf("resources[%d]: a file needs a uri, a size and a sha256 digest", i)
		}
		listed = listed || r.URI == e.URI
		s.Files = append(s.Files, File{URI: r.URI, Digest: r.Digest, Size: *r.Size})
	}
	if !listed {
		return nil, errors.New("SKILL.md is not among its resources")
	}
	return s, nil
}

// ResourceBytes is the one content of uri in res: its text as UTF-8, or
// its blob.
func ResourceBytes(res *mcp.ReadResourceResult, uri string) ([]byte, error) {
	var found []*mcp.ResourceContents
	for _, c := range res.Contents {
		if c != nil && (c.URI == uri || c.URI == "") {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("the server sent %d contents for the file, not 1", len(found))
	}
	if found[0].Blob != nil {
		return found[0].Blob, nil
	}
	return []byte(found[0].Text), nil
}

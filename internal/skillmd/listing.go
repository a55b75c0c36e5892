package skillmd

import (
	"context"
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

// MaxListPages bounds a paginated skills listing.
const MaxListPages = 100

// EntryError reports an entry of a listing that fails Entry.Check.
type EntryError struct {
	// Index is the entry's place in its page; Name and URI are its own.
	Index     int
	Name, URI string
	Err       error
}

func (e *EntryError) Error() string { return fmt.Sprintf("skills[%d]: %v", e.Index, e.Err) }

// Unwrap returns Err.
func (e *EntryError) Unwrap() error { return e.Err }

// List lists the skills page by page, page returning the page at a
// cursor, and checks each entry: a failing entry is an *EntryError, an
// error of page is returned as is, and a listing of more than
// MaxListPages pages is an error.
func List(ctx context.Context, page func(ctx context.Context, cursor string) (*ListResult, error)) ([]*Listed, error) {
	var out []*Listed
	cursor := ""
	for range MaxListPages {
		res, err := page(ctx, cursor)
		if err != nil {
			return nil, err
		}
		for i, e := range res.Skills {
			l, err := e.Check()
			if err != nil {
				return nil, &EntryError{Index: i, Name: e.Name(), URI: e.URI, Err: err}
			}
			out = append(out, l)
		}
		if res.NextCursor == "" {
			return out, nil
		}
		cursor = res.NextCursor
	}
	return nil, fmt.Errorf("skills/list: more than %d pages", MaxListPages)
}

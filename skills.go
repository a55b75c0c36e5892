package mcpadapter

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/skillmd"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SkillsExtension is the ID of the MCP skills extension (SEP-2640): a
// server that declares it lists Agent Skills with skills/list, each a
// SKILL.md and its supporting files, all of them resources.
const SkillsExtension = "io.modelcontextprotocol/skills"

// Skill is a server's listing of one skill: nothing of it has been read.
// Load it with Client.Skill, which reads SKILL.md and checks it; read its
// other files with Client.SkillFile, when the skill's instructions call
// for them.
type Skill struct {
	// URI is the resource of the skill's SKILL.md.
	URI string
	// Name and Description are from the listed frontmatter.
	Name, Description string
	// Frontmatter is the listed frontmatter, as the server sent it.
	Frontmatter map[string]any
	// Files are the skill's files (SKILL.md among them), each with the
	// digest and size the content must have.
	Files []SkillFile
}

// SkillFile is one file of a skill as listed.
type SkillFile struct {
	URI    string
	Digest string // "sha256:" and hex
	Size   int64  // bytes
}

// LoadedSkill is a skill whose SKILL.md was read and passed the checks.
type LoadedSkill struct {
	*Skill
	// Content is SKILL.md; Instructions is its body, after the frontmatter.
	Content, Instructions string
}

// SkillError is a skill file that failed a check (its size, its digest, or
// SKILL.md's frontmatter against the listing): its content is not used.
type SkillError struct {
	Server, Skill, URI string
	Check              string // "size", "digest", "frontmatter" or "listing"
	Err                error
}

// Error names the server, the skill, the file and the check.
func (e *SkillError) Error() string {
	return fmt.Sprintf("%s: skill %q: %s: %s check failed: %v", e.Server, e.Skill, e.URI, e.Check, e.Err)
}

// Unwrap returns Err.
func (e *SkillError) Unwrap() error { return e.Err }

// addSkillMethods registers skills/list with go-sdk, once, when the client
// is built: registering writes go-sdk's method table, which every request
// reads.
func (c *Client) addSkillMethods() {
	if err := mcp.AddSendingCustomMethod[*skillmd.ListParams, *skillmd.ListResult](c.sdk, skillmd.ListMethod); err != nil {
		c.log.Error("skills unavailable", "error", err)
	}
}

// Skills lists the server's skills (skills/list) without reading any of
// their files. A server that does not declare SkillsExtension has none:
// the list is empty and nothing is sent.
func (c *Client) Skills(ctx context.Context) ([]*Skill, error) {
	info, err := c.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if info.Capabilities == nil || info.Capabilities.Extensions[SkillsExtension] == nil {
		return nil, nil
	}
	var sendErr error // the failure of a request, returned as is
	listed, err := skillmd.List(ctx, func(ctx context.Context, cursor string) (res *skillmd.ListResult, err error) {
		err = c.send(ctx, c.request("skills/list", ""), func(ctx context.Context, s *engine.Session) error {
			res, err = mcp.CallCustomMethod[*skillmd.ListParams, *skillmd.ListResult](ctx, s.SDK(), skillmd.ListMethod, &skillmd.ListParams{Cursor: cursor})
			return err
		})
		if err != nil {
			sendErr = c.serverErr(err, "skills/list")
		}
		return res, sendErr
	})
	var ee *skillmd.EntryError
	switch {
	case err == nil:
	case err == sendErr:
		return nil, err
	case errors.As(err, &ee):
		return nil, &SkillError{Server: c.name, Skill: ee.Name, URI: ee.URI, Check: "listing", Err: ee}
	default:
		return nil, fmt.Errorf("%s: %w", c.name, err)
	}
	var out []*Skill
	for _, l := range listed {
		out = append(out, skillOf(l))
	}
	return out, nil
}

// Skill loads the skill named name (or whose SKILL.md URI is name): it
// lists the skills, reads SKILL.md and checks its size and digest against
// the listing and its frontmatter field by field; on any mismatch it
// returns a *SkillError and the content is not used.
func (c *Client) Skill(ctx context.Context, name string) (*LoadedSkill, error) {
	skills, err := c.Skills(ctx)
	if err != nil {
		return nil, err
	}
	var s *Skill
	for _, k := range skills {
		if k.Name == name || k.URI == name {
			s = k
			break
		}
	}
	if s == nil {
		return nil, fmt.Errorf("%s: no skill named %q", c.name, name)
	}
	content, err := c.SkillFile(ctx, s, s.URI)
	if err != nil {
		return nil, err
	}
	doc := string(content)
	if err := skillmd.CheckFrontmatter(doc, s.Frontmatter); err != nil {
		return nil, &SkillError{Server: c.name, Skill: s.Name, URI: s.URI, Check: "frontmatter", Err: err}
	}
	_, body, _ := skillmd.Split(doc)
	return &LoadedSkill{Skill: s, Content: doc, Instructions: body}, nil
}

// SkillFile reads one file of s (uri must be among s.Files) and checks its
// size and digest.
func (c *Client) SkillFile(ctx context.Context, s *Skill, uri string) ([]byte, error) {
	var f *SkillFile
	for i := range s.Files {
		if s.Files[i].URI == uri {
			f = &s.Files[i]
		}
	}
	if f == nil {
		return nil, fmt.Errorf("%s: skill %q lists no file %q", c.name, s.Name, uri)
	}
	res, err := c.ReadResource(ctx, uri)
	if err != nil {
		return nil, err
	}
	content, err := skillmd.ResourceBytes(res, uri)
	if err != nil {
		return nil, &SkillError{Server: c.name, Skill: s.Name, URI: uri, Check: "size", Err: err}
	}
	if err := skillmd.CheckSize(content, f.Size); err != nil {
		return nil, &SkillError{Server: c.name, Skill: s.Name, URI: uri, Check: "size", Err: err}
	}
	if err := skillmd.CheckDigest(content, f.Digest); err != nil {
		return nil, &SkillError{Server: c.name, Skill: s.Name, URI: uri, Check: "digest", Err: err}
	}
	return content, nil
}

// skillOf is the Skill of a checked listing.
func skillOf(l *skillmd.Listed) *Skill {
	s := &Skill{URI: l.URI, Name: l.Name, Description: l.Description, Frontmatter: l.Frontmatter, Files: make([]SkillFile, len(l.Files))}
	for i, f := range l.Files {
		s.Files[i] = SkillFile(f)
	}
	return s
}

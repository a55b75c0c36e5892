package mcpadapter_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestSkills lists a server's skills without reading a file, then loads
// one: SKILL.md is read and checked, the reference file only when asked.
func TestSkills(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv, st := testserver.NewWithState(testserver.Options{Skills: true})
	c, err := mcpadapter.NewClient(srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	skills, err := c.Skills(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(skills) != 1 || skills[0].Name != "pdf-processing" || skills[0].URI != testserver.SkillURI || len(skills[0].Files) != 2 {
		t.Fatalf("skills: %+v", skills)
	}
	if n := st.Requests("resources/read"); n != 0 {
		t.Fatalf("listing read %d files; a listing reads none", n)
	}
	s, err := c.Skill(ctx, "pdf-processing")
	if err != nil {
		t.Fatal(err)
	}
	if s.Instructions != "\n"+testserver.SkillBody || s.Description != "Extract, fill, and assemble PDF documents" {
		t.Errorf("loaded: instructions %q, description %q", s.Instructions, s.Description)
	}
	if n := st.Requests("resources/read"); n != 1 {
		t.Errorf("loading read %d files, want SKILL.md only", n)
	}
	ref, err := c.SkillFile(ctx, s.Skill, testserver.SkillRefURI)
	if err != nil || !strings.HasPrefix(string(ref), "FORMS:") {
		t.Errorf("reference file: %q, %v", ref, err)
	}

	// A server without the extension has no skills, and is not asked.
	plain := testserver.New(testserver.Options{})
	pc, err := mcpadapter.NewClient(plain, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	if none, err := pc.Skills(ctx); err != nil || len(none) != 0 {
		t.Errorf("a server without skills: %v, %v", none, err)
	}
}

// TestSkillTampered: a SKILL.md that fails the size, digest or
// frontmatter check is not loaded, and nothing more is read.
func TestSkillTampered(t *testing.T) {
	t.Parallel()
	for _, check := range []string{"size", "digest", "frontmatter"} {
		t.Run(check, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			srv, st := testserver.NewWithState(testserver.Options{Skills: true, SkillTamper: check})
			c, err := mcpadapter.NewClient(srv, &mcpadapter.ClientOptions{Name: "skilled"})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			s, err := c.Skill(ctx, "pdf-processing")
			var se *mcpadapter.SkillError
			if !errors.As(err, &se) || se.Check != check || se.URI != testserver.SkillURI || se.Server != "skilled" {
				t.Fatalf("Skill: %v, %v (want a *SkillError for the %s check)", s, err, check)
			}
			if n := st.Requests("resources/read"); n != 1 {
				t.Errorf("%d reads, want SKILL.md only", n)
			}
		})
	}
}

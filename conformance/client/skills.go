package main

import (
	"context"
	"fmt"
	"log"

	"github.com/mcpadapter/mcpadapter"
)

// runSkillsList (sep-2640-client-no-prefetch) lists the server's skills
// as a host does on connecting: Client.Skills reads none of their files.
func runSkillsList(ctx context.Context, url string, _ scenarioContext) error {
	c, err := newClient(url, mcpadapter.ClientOptions{})
	if err != nil {
		return err
	}
	defer c.Close()
	skills, err := c.Skills(ctx)
	if err != nil {
		return fmt.Errorf("Client.Skills: %w", err)
	}
	for _, s := range skills {
		log.Printf("skill %q (%s): %d files, none read", s.Name, s.URI, len(s.Files))
	}
	return nil
}

// runSkillsLoad (sep-2640-client-verify-*) lists the skills and loads each
// as a host does when the model asks for it: Client.Skill reads SKILL.md
// and checks its size, digest and frontmatter; only a skill that passes
// has its other files read. The scenarios serve a SKILL.md that fails one
// check: the load must fail and nothing more be read.
func runSkillsLoad(ctx context.Context, url string, _ scenarioContext) error {
	c, err := newClient(url, mcpadapter.ClientOptions{})
	if err != nil {
		return err
	}
	defer c.Close()
	skills, err := c.Skills(ctx)
	if err != nil {
		return fmt.Errorf("Client.Skills: %w", err)
	}
	for _, s := range skills {
		loaded, err := c.Skill(ctx, s.Name)
		if err != nil {
			log.Printf("skill %q not loaded: %v", s.Name, err)
			continue
		}
		for _, f := range loaded.Files {
			if f.URI == loaded.URI {
				continue
			}
			if _, err := c.SkillFile(ctx, loaded.Skill, f.URI); err != nil {
				log.Printf("skill %q: %v", s.Name, err)
			}
		}
	}
	return nil
}

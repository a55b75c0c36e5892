// Command release checks that the repository's modules agree on one
// release version, sets a new one, and tags a release. Run it through
// scripts/release:
//
//	release check [VERSION]     versions agree (CI runs this)
//	release set-version VERSION every sibling requirement and go.work replacement to VERSION
//	release tag VERSION         check, then tag every released module at HEAD (never pushes)
//
// Every released module (all but those under internal/) is tagged at each
// release, its directory being the tag's prefix: v0.1.0 for the root
// module, openai/v0.1.0, cmd/mcpadapter/v0.1.0, and so on.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/tools/repo"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

const usage = `usage:
  release check [VERSION]
  release set-version VERSION
  release tag VERSION`

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	root, err := repo.Root(wd)
	if err != nil {
		return err
	}
	mods, err := repo.Modules(root)
	if err != nil {
		return err
	}
	switch {
	case args[0] == "check" && len(args) <= 2:
		want := ""
		if len(args) == 2 {
			want = args[1]
		}
		v, err := check(root, mods, want)
		if err != nil {
			return err
		}
		fmt.Printf("%d modules agree on %s\n", len(mods), v)
		return nil
	case args[0] == "set-version" && len(args) == 2:
		return setVersion(root, mods, args[1])
	case args[0] == "tag" && len(args) == 2:
		return tag(root, mods, args[1])
	}
	return errors.New(usage)
}

// check returns the one version at which the modules require their
// siblings, or an error listing every disagreement.
func check(root string, mods []repo.Module, want string) (string, error) {
	var problems []string
	add := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }

	versions := repo.SiblingVersions(mods)
	v := want
	if v == "" {
		if len(versions) == 1 {
			for k := range versions {
				v = k
			}
		} else {
			add("the modules require their siblings at %d versions, not one", len(versions))
		}
	}
	if v != "" && (!semver.IsValid(v) || semver.Canonical(v) != v || semver.Build(v) != "") {
		add("%q is not a release version (vMAJOR.MINOR.PATCH)", v)
	}
	for got, where := range versions {
		if got != v {
			sort.Strings(where)
			if len(where) > 3 {
				where = append(where[:3], fmt.Sprintf("and %d more", len(where)-3))
			}
			add("siblings required at %s, not %s: %s", got, v, strings.Join(where, "; "))
		}
	}

	byPath := map[string]repo.Module{}
	for _, m := range mods {
		byPath[m.Path] = m
		if want := path.Join(repo.RootModule, m.Dir); m.Path != want {
			add("%s/go.mod: module %s, want %s (the path of its directory)", m.Dir, m.Path, want)
		}
		for _, r := range m.File.Replace {
			add("%s/go.mod: replace %s: a module with replace directives cannot be installed from its tag (go.work serves development)", m.Dir, r.Old.Path)
		}
		for _, r := range m.File.Require {
			if !repo.IsSibling(r.Mod.Path) {
				continue
			}
			if s, ok := byPath[r.Mod.Path]; ok && !s.Released() {
				add("%s/go.mod requires %s, which is not released", m.Dir, r.Mod.Path)
			}
		}
		sum, err := os.ReadFile(filepath.Join(root, m.Dir, "go.sum"))
		if err == nil && regexp.MustCompile(`(?m)^github\.com/mcpadapter/mcpadapter[/ ]`).Match(sum) {
			add("%s/go.sum has lines for the repository's own modules (they change with every commit: leave them out)", m.Dir)
		}
	}
	for _, m := range mods {
		for _, r := range m.File.Require {
			if repo.IsSibling(r.Mod.Path) {
				if _, ok := byPath[r.Mod.Path]; !ok {
					add("%s/go.mod requires %s, which is no module of this repository", m.Dir, r.Mod.Path)
				}
			}
		}
	}

	for _, work := range []string{"go.work", "genkit.work"} {
		problems = append(problems, checkWork(root, work, mods, v)...)
	}

	changelog, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		add("CHANGELOG.md: %v", err)
	} else if v != "" && !regexp.MustCompile(`(?m)^## \[?`+regexp.QuoteMeta(v)+`\b`).Match(changelog) {
		add("CHANGELOG.md has no section \"## %s\"", v)
	}
	if len(problems) > 0 {
		return "", errors.New(strings.Join(problems, "\n  "))
	}
	return v, nil
}

// checkWork checks a workspace file: every module it uses exists, and
// every released module it needs is replaced at version v by its own
// directory (Go reads the go.mod of each required version, even of a
// workspace module): in go.work every released module, in genkit.work
// those its modules require. go.work must use every module but those
// genkit.work uses.
func checkWork(root, name string, mods []repo.Module, v string) []string {
	var problems []string
	data, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", name, err)}
	}
	wf, err := modfile.ParseWork(name, data, nil)
	if err != nil {
		return []string{err.Error()}
	}
	byDir := map[string]repo.Module{}
	for _, m := range mods {
		byDir[m.Dir] = m
	}
	used := map[string]bool{}
	for _, u := range wf.Use {
		d := path.Clean(u.Path)
		used[d] = true
		if _, ok := byDir[d]; !ok {
			problems = append(problems, fmt.Sprintf("%s: use %s: no module there", name, u.Path))
		}
	}
	replaced := map[string]*modfile.Replace{}
	for _, r := range wf.Replace {
		replaced[r.Old.Path] = r
	}
	for _, m := range mods {
		if !m.Released() || (name != "go.work" && !requiredBy(m.Path, mods, used)) {
			continue
		}
		r, ok := replaced[m.Path]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s: no replace %s %s => ./%s", name, m.Path, v, m.Dir))
		case r.Old.Version != v || path.Clean(r.New.Path) != m.Dir || r.New.Version != "":
			problems = append(problems, fmt.Sprintf("%s: replace %s %s => %s, want %s => ./%s", name, m.Path, r.Old.Version, r.New.Path, v, m.Dir))
		}
	}
	if name == "go.work" {
		other, err := os.ReadFile(filepath.Join(root, "genkit.work"))
		if err == nil {
			if owf, err := modfile.ParseWork("genkit.work", other, nil); err == nil {
				for _, u := range owf.Use {
					used[path.Clean(u.Path)] = true
				}
			}
		}
		for _, m := range mods {
			if !used[m.Dir] {
				problems = append(problems, fmt.Sprintf("go.work: module %s is in neither go.work nor genkit.work: nothing builds or tests it", m.Dir))
			}
		}
	}
	return problems
}

// requiredBy reports whether a module used in a workspace requires p.
func requiredBy(p string, mods []repo.Module, used map[string]bool) bool {
	for _, m := range mods {
		if !used[m.Dir] {
			continue
		}
		for _, r := range m.File.Require {
			if r.Mod.Path == p {
				return true
			}
		}
	}
	return false
}

// workReplaceRE matches the old side of a workspace file's replacement of
// one of the repository's modules.
var workReplaceRE = regexp.MustCompile(`(?m)^(\s*(?:replace\s+)?github\.com/mcpadapter/mcpadapter\S*)\s+v\S+\s+=>`)

// setVersion rewrites every requirement on a sibling, and the workspace
// files' replacements, to version v.
func setVersion(root string, mods []repo.Module, v string) error {
	if !semver.IsValid(v) || semver.Canonical(v) != v {
		return fmt.Errorf("%q is not a release version (vMAJOR.MINOR.PATCH)", v)
	}
	for _, m := range mods {
		changed := false
		for _, r := range m.File.Require {
			if repo.IsSibling(r.Mod.Path) && r.Mod.Version != v {
				if err := m.File.AddRequire(r.Mod.Path, v); err != nil {
					return err
				}
				changed = true
			}
		}
		if !changed {
			continue
		}
		m.File.Cleanup()
		out, err := m.File.Format()
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(root, m.Dir, "go.mod"), out, 0o644); err != nil {
			return err
		}
		fmt.Printf("%s/go.mod: siblings at %s\n", m.Dir, v)
	}
	for _, name := range []string{"go.work", "genkit.work"} {
		file := filepath.Join(root, name)
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		// The replace lines are rewritten in place, so that the file's
		// comments and layout stay as they are.
		out := workReplaceRE.ReplaceAll(data, []byte("${1} "+v+" =>"))
		if _, err := modfile.ParseWork(name, out, nil); err != nil {
			return err
		}
		if err := os.WriteFile(file, out, 0o644); err != nil {
			return err
		}
		fmt.Printf("%s: replacements at %s\n", name, v)
	}
	fmt.Println("now: add a \"## " + v + "\" section to CHANGELOG.md, commit, and run scripts/release tag " + v)
	return nil
}

// tag creates an annotated tag for every released module at HEAD. It
// refuses in CI, with a dirty work tree, or when any tag exists.
func tag(root string, mods []repo.Module, v string) error {
	if os.Getenv("CI") != "" {
		return errors.New("refusing to tag in CI (CI is set): releases are tagged by a person")
	}
	if _, err := check(root, mods, v); err != nil {
		return err
	}
	status, err := repo.Git(root, "status", "--porcelain")
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(status)) > 0 {
		return errors.New("the work tree has uncommitted changes: a tag names a commit")
	}
	var tags []string
	for _, m := range mods {
		if m.Released() {
			tags = append(tags, m.TagPrefix()+v)
		}
	}
	for _, t := range tags {
		if _, err := repo.Git(root, "rev-parse", "-q", "--verify", "refs/tags/"+t); err == nil {
			return fmt.Errorf("tag %s exists", t)
		}
	}
	for _, t := range tags {
		if _, err := repo.Git(root, "tag", "-a", "-m", "mcpadapter "+v, t); err != nil {
			return err
		}
		fmt.Println(t)
	}
	fmt.Printf("tagged %d modules at HEAD; publish with: git push origin %s\n", len(tags), strings.Join(tags, " "))
	return nil
}

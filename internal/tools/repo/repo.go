// Package repo finds the Go modules of this repository and reads their
// go.mod files, for the release tools.
package repo

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
)

// RootModule is the module path of the repository's root module; every
// module of the repository has this path or a path below it.
const RootModule = "github.com/mcpadapter/mcpadapter"

// Module is one module of the repository.
type Module struct {
	Dir  string        // slash path from the repository root; "." for the root module
	Path string        // module path
	File *modfile.File // the parsed go.mod
}

// TagPrefix is the prefix of this module's release tags: "" for the root
// module, "openai/" for the module in openai/.
func (m Module) TagPrefix() string {
	if m.Dir == "." {
		return ""
	}
	return m.Dir + "/"
}

// Released reports whether the module is tagged at a release. Modules
// under internal/ (the release tools) are not: no other module requires
// them and nobody outside can import them.
func (m Module) Released() bool {
	return !strings.HasPrefix(m.Dir+"/", "internal/")
}

// IsSibling reports whether a module path is one of this repository's.
func IsSibling(modPath string) bool {
	return modPath == RootModule || strings.HasPrefix(modPath, RootModule+"/")
}

// Root returns the top directory of the git work tree holding dir.
func Root(dir string) (string, error) {
	out, err := Git(dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// Git runs git in dir and returns its standard output.
func Git(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Modules returns the modules of the work tree at root: every go.mod git
// tracks, sorted by directory, the root module first.
func Modules(root string) ([]Module, error) {
	out, err := Git(root, "ls-files", "--", "go.mod", "*/go.mod")
	if err != nil {
		return nil, err
	}
	var mods []Module
	for _, name := range strings.Fields(string(out)) {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			return nil, err
		}
		m, err := Parse(name, data)
		if err != nil {
			return nil, err
		}
		mods = append(mods, m)
	}
	Sort(mods)
	if len(mods) == 0 || mods[0].Dir != "." {
		return nil, errors.New("no go.mod at the repository's root")
	}
	return mods, nil
}

// Parse parses the go.mod file at the slash path name (relative to the
// repository root).
func Parse(name string, data []byte) (Module, error) {
	f, err := modfile.Parse(name, data, nil)
	if err != nil {
		return Module{}, err
	}
	if f.Module == nil {
		return Module{}, fmt.Errorf("%s: no module line", name)
	}
	return Module{Dir: path.Dir(name), Path: f.Module.Mod.Path, File: f}, nil
}

// Sort sorts modules by directory, the root first.
func Sort(mods []Module) {
	sort.Slice(mods, func(i, j int) bool {
		if (mods[i].Dir == ".") != (mods[j].Dir == ".") {
			return mods[i].Dir == "."
		}
		return mods[i].Dir < mods[j].Dir
	})
}

// SiblingVersions returns the versions at which the modules require their
// siblings, each with the requirements that name it ("openai/go.mod:
// github.com/mcpadapter/mcpadapter").
func SiblingVersions(mods []Module) map[string][]string {
	vs := map[string][]string{}
	for _, m := range mods {
		for _, r := range m.File.Require {
			if IsSibling(r.Mod.Path) {
				vs[r.Mod.Version] = append(vs[r.Mod.Version], path.Join(m.Dir, "go.mod")+": "+r.Mod.Path)
			}
		}
	}
	return vs
}

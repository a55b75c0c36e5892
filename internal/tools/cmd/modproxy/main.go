// Command modproxy writes a Go module proxy, as a directory for
// GOPROXY=file://DIR, that serves every module of this repository at one
// version, made from a git revision exactly as a tag at that revision
// would publish it:
//
//	go run ./internal/tools/cmd/modproxy -out /tmp/proxy [-rev HEAD] [-version v0.1.0]
//
// Each module's zip is made with golang.org/x/mod/zip from the files
// `git archive` gives for the revision (what the go command fetches from a
// tag), without the directories of nested modules, and with the root's
// LICENSE added to a module that has none (as the go command does). The
// version defaults to the one at which the modules require their siblings.
//
// With the proxy first in GOPROXY (and GONOSUMDB covering the repository's
// modules, which the checksum database does not know at these contents), a
// module outside the workspace resolves its siblings as a consumer would.
package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/tools/repo"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

func main() {
	out := flag.String("out", "", "directory to write the proxy into (created; existing module versions are replaced)")
	rev := flag.String("rev", "HEAD", "git revision to make the modules from")
	version := flag.String("version", "", "version to serve every module at (default: the version the modules require of their siblings)")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: modproxy -out DIR [-rev REV] [-version vX.Y.Z]")
		os.Exit(2)
	}
	if err := run(*out, *rev, *version); err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
}

func run(out, rev, version string) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	root, err := repo.Root(wd)
	if err != nil {
		return err
	}
	archive, err := repo.Git(root, "-c", "core.autocrlf=input", "-c", "core.eol=lf", "archive", "--format=zip", rev)
	if err != nil {
		return err
	}
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		return err
	}
	stamp, err := repo.Git(root, "show", "-s", "--format=%cI", rev)
	if err != nil {
		return err
	}
	when, err := time.Parse(time.RFC3339, strings.TrimSpace(string(stamp)))
	if err != nil {
		return err
	}

	files := map[string]*zip.File{}
	var mods []repo.Module
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") {
			continue
		}
		files[f.Name] = f
		if f.Name == "go.mod" || strings.HasSuffix(f.Name, "/go.mod") {
			data, err := readAll(f)
			if err != nil {
				return err
			}
			m, err := repo.Parse(f.Name, data)
			if err != nil {
				return err
			}
			mods = append(mods, m)
		}
	}
	repo.Sort(mods)
	if version == "" {
		vs := repo.SiblingVersions(mods)
		if len(vs) != 1 {
			return fmt.Errorf("the modules require their siblings at %d versions, not one; give -version", len(vs))
		}
		for v := range vs {
			version = v
		}
	}
	if !semver.IsValid(version) || semver.Canonical(version) != version {
		return fmt.Errorf("not a semantic version: %q", version)
	}

	license := files["LICENSE"]
	for _, m := range mods {
		if !m.Released() {
			continue
		}
		if err := writeModule(out, m, version, when, files, license); err != nil {
			return fmt.Errorf("%s: %w", m.Path, err)
		}
		fmt.Printf("%s %s (%s)\n", m.Path, version, m.Dir)
	}
	return nil
}

// writeModule writes m's .info, .mod, .zip and list files.
func writeModule(out string, m repo.Module, version string, when time.Time, files map[string]*zip.File, license *zip.File) error {
	esc, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	dir := filepath.Join(out, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}

	prefix := ""
	if m.Dir != "." {
		prefix = m.Dir + "/"
	}
	var zfiles []modzip.File
	haveLicense := false
	for name, f := range files {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		rel := strings.TrimPrefix(name, prefix)
		zfiles = append(zfiles, archived{name: rel, f: f})
		haveLicense = haveLicense || rel == "LICENSE"
	}
	if !haveLicense && license != nil {
		zfiles = append(zfiles, archived{name: "LICENSE", f: license})
	}
	sort.Slice(zfiles, func(i, j int) bool { return zfiles[i].Path() < zfiles[j].Path() })

	mv := module.Version{Path: m.Path, Version: version}
	var buf bytes.Buffer
	if err := modzip.Create(&buf, mv, zfiles); err != nil {
		return err
	}
	gomod, err := readAll(files[path.Join(m.Dir, "go.mod")])
	if err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, when.UTC()})
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		version + ".zip":  buf.Bytes(),
		version + ".mod":  gomod,
		version + ".info": info,
		"list":            []byte(version + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func readAll(f *zip.File) ([]byte, error) {
	r, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// archived is a file of the git archive, named relative to its module.
type archived struct {
	name string
	f    *zip.File
}

func (a archived) Path() string                 { return a.name }
func (a archived) Lstat() (fs.FileInfo, error)  { return a.f.FileInfo(), nil }
func (a archived) Open() (io.ReadCloser, error) { return a.f.Open() }

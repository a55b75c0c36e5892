// Package trust decides whether the CLI may use an mcpServers config file.
// A config file is code: it names commands to run, URLs to contact with
// headers and credentials, files to read and environment variables to
// expand into all of those. A file the user keeps for themselves (see
// UserLevel) is trusted; any other, such as a repository's ./.mcp.json, is
// used only once the user has approved its content, which Store remembers
// by the file's path and a hash of its content, so that a changed file is
// asked about again.
package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// UserLevel reports whether the config file at path is one the user keeps
// for themselves, which no checked-out repository can write: a file
// directly in the home directory (~/.mcp.json, ~/.claude.json), anything
// under mcpadapter's own directory in the user's config directory
// (~/.config/mcpadapter/mcp.json), and the user-level files of other MCP
// clients (Claude Desktop, VS Code, Cursor, Windsurf, Gemini CLI). The
// path is resolved (absolute, symbolic links followed) first.
func UserLevel(path string) bool {
	real, err := resolve(path)
	if err != nil {
		return false
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return false
	}
	home = resolveDir(home)
	if filepath.Dir(real) == home {
		return true
	}
	var known []string
	if cfg, err := os.UserConfigDir(); err == nil {
		cfg = resolveDir(cfg)
		if within(real, filepath.Join(cfg, "mcpadapter")) {
			return true
		}
		known = append(known, filepath.Join(cfg, "Claude", "claude_desktop_config.json"), filepath.Join(cfg, "Code", "User", "mcp.json"))
	}
	known = append(known,
		filepath.Join(home, ".cursor", "mcp.json"),
		filepath.Join(home, ".codeium", "windsurf", "mcp_config.json"),
		filepath.Join(home, ".gemini", "settings.json"))
	for _, k := range known {
		if real == k {
			return true
		}
	}
	return false
}

// resolve returns the absolute path of path with symbolic links followed.
func resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// resolveDir is resolve for a directory that may not exist: dir itself,
// cleaned, when it cannot be resolved.
func resolveDir(dir string) string {
	if r, err := resolve(dir); err == nil {
		return r
	}
	return filepath.Clean(dir)
}

// within reports whether path is dir or under it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Store remembers the config files the user approved: for each file (its
// resolved path) the SHA-256 of the content approved.
type Store struct {
	path string
}

// record is the store's file.
type record struct {
	Version  int               `json:"version"`
	Approved map[string]string `json:"approved"` // resolved path -> hex SHA-256 of the content
}

// DefaultStorePath is the store in the user's config directory:
// ~/.config/mcpadapter/trusted-configs.json on Linux.
func DefaultStorePath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding the user's config directory for the approved configs: %w", err)
	}
	return filepath.Join(dir, "mcpadapter", "trusted-configs.json"), nil
}

// NewStore returns the store kept in the file at path.
func NewStore(path string) *Store { return &Store{path: path} }

// Hash is the hex SHA-256 of a config file's content, as the store keeps it.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Approved reports whether the file at path was approved with this
// content.
func (s *Store) Approved(path string, data []byte) (bool, error) {
	key, err := resolve(path)
	if err != nil {
		return false, err
	}
	r, err := s.read()
	if err != nil {
		return false, err
	}
	return r.Approved[key] == Hash(data), nil
}

// Approve records that the user approved the file at path with this
// content (replacing an approval of other content).
func (s *Store) Approve(path string, data []byte) error {
	return s.update(path, func(r *record, key string) { r.Approved[key] = Hash(data) })
}

// Revoke forgets the approval of the file at path, if any.
func (s *Store) Revoke(path string) error {
	return s.update(path, func(r *record, key string) { delete(r.Approved, key) })
}

func (s *Store) update(path string, change func(r *record, key string)) error {
	key, err := resolve(path)
	if err != nil {
		return err
	}
	r, err := s.read()
	if err != nil {
		return err
	}
	change(r, key)
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("saving the approval: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".trusted-configs-*")
	if err != nil {
		return fmt.Errorf("saving the approval: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("saving the approval: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("saving the approval: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("saving the approval: %w", err)
	}
	return nil
}

// read returns the store's content; a missing file is an empty store.
func (s *Store) read() (*record, error) {
	r := &record{Version: 1, Approved: map[string]string{}}
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the approved configs: %w", err)
	}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("the approved configs file %s is corrupt (remove it to approve configs again): %w", s.path, err)
	}
	if r.Approved == nil {
		r.Approved = map[string]string{}
	}
	return r, nil
}

package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/oauth2"
)

// A TokenStore keeps OAuth tokens between runs, keyed by the MCP server's
// URL. Implementations must be safe for concurrent use. Load returns nil
// and no error when it has nothing for key.
type TokenStore interface {
	Load(ctx context.Context, key string) (*StoredToken, error)
	Save(ctx context.Context, key string, t *StoredToken) error
}

// StoredToken is what a TokenStore keeps for one server: the token and
// what is needed to refresh it without asking the user again. It holds
// secrets: its String and LogValue methods print none of them.
type StoredToken struct {
	Token *oauth2.Token `json:"token"`
	// Scopes are the scopes the token was granted (or asked for).
	Scopes []string `json:"scopes,omitempty"`
	// The client and authorization server the token came from.
	ClientID     string           `json:"client_id"`
	ClientSecret string           `json:"client_secret,omitempty"`
	AuthURL      string           `json:"auth_url"`
	TokenURL     string           `json:"token_url"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style,omitempty"`
}

// String describes t without its secrets.
func (t *StoredToken) String() string {
	if t == nil || t.Token == nil {
		return "StoredToken(none)"
	}
	return fmt.Sprintf("StoredToken(client %s, token endpoint %s, scopes %q, expires %v, refresh token: %t)",
		t.ClientID, t.TokenURL, t.Scopes, t.Token.Expiry.Format("2006-01-02T15:04:05Z07:00"), t.Token.RefreshToken != "")
}

// LogValue describes t for log/slog without its secrets.
func (t *StoredToken) LogValue() slog.Value { return slog.StringValue(t.String()) }

// config is the oauth2 configuration that refreshes t.
func (t *StoredToken) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID:     t.ClientID,
		ClientSecret: t.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: t.AuthURL, TokenURL: t.TokenURL, AuthStyle: t.AuthStyle},
		Scopes:       t.Scopes,
	}
}

// token returns a copy of the token.
func (t *StoredToken) token() *oauth2.Token {
	tok := *t.Token
	return &tok
}

// storedFrom records tok with the configuration that refreshes it.
func storedFrom(oc *oauth2.Config, tok *oauth2.Token) *StoredToken {
	scopes := oc.Scopes
	if s, ok := tok.Extra("scope").(string); ok && s != "" {
		scopes = strings.Fields(s)
	}
	// Keep only the standard fields: Extra is not serialised anyway.
	t := &oauth2.Token{AccessToken: tok.AccessToken, TokenType: tok.TokenType, RefreshToken: tok.RefreshToken, Expiry: tok.Expiry}
	return &StoredToken{
		Token:        t,
		Scopes:       scopes,
		ClientID:     oc.ClientID,
		ClientSecret: oc.ClientSecret,
		AuthURL:      oc.Endpoint.AuthURL,
		TokenURL:     oc.Endpoint.TokenURL,
		AuthStyle:    oc.Endpoint.AuthStyle,
	}
}

// NewMemoryTokenStore returns a TokenStore that keeps tokens in memory.
func NewMemoryTokenStore() TokenStore {
	return &memoryTokenStore{m: make(map[string]StoredToken)}
}

type memoryTokenStore struct {
	mu sync.Mutex
	m  map[string]StoredToken
}

func (s *memoryTokenStore) Load(_ context.Context, key string) (*StoredToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.m[key]
	if !ok {
		return nil, nil
	}
	return &t, nil
}

func (s *memoryTokenStore) Save(_ context.Context, key string, t *StoredToken) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = *t
	return nil
}

// NewFileTokenStore returns a TokenStore that keeps tokens in one JSON file
// at path, readable only by the user (mode 0600, directory 0700). Each
// save reads the file, changes one entry and replaces the file atomically,
// under a lock on path+".lock" (on Unix; a save gives up when its context
// ends while another process holds the lock), so stores in several
// goroutines or processes do not lose each other's tokens. A file that is not valid
// JSON is moved aside to path+".corrupt" on the next save; any other read
// error is returned.
func NewFileTokenStore(path string) TokenStore {
	return &fileTokenStore{path: path}
}

// DefaultTokenFile is where the CLI keeps tokens:
// $XDG_CONFIG_HOME/mcpadapter/tokens.json (or the OS's equivalent).
func DefaultTokenFile() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding the token file: %w", err)
	}
	return filepath.Join(dir, "mcpadapter", "tokens.json"), nil
}

type fileTokenStore struct {
	path string
	mu   sync.Mutex // within this store; the file lock is across stores
}

func (s *fileTokenStore) Load(_ context.Context, key string) (*StoredToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.read()
	if err != nil {
		return nil, err
	}
	t, ok := m[key]
	if !ok || t.Token == nil {
		return nil, nil
	}
	return &t, nil
}

func (s *fileTokenStore) Save(ctx context.Context, key string, t *StoredToken) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	unlock, err := lockFile(ctx, s.path+".lock")
	if err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	defer unlock()
	m, err := s.read()
	var bad *corruptTokenFileError
	switch {
	case errors.As(err, &bad):
		if err := os.Rename(s.path, s.path+".corrupt"); err != nil {
			return fmt.Errorf("token file: moving the unreadable file aside: %w", err)
		}
		m = make(map[string]StoredToken)
	case err != nil:
		return err
	}
	m[key] = *t
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("token file %s: %w", s.path, err)
	}
	return writeFileAtomic(s.path, data)
}

// writeFileAtomic replaces path with data (mode 0600) so that a reader
// sees the old file or the new one, and the new one survives a crash.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tokens-*.json")
	if err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("token file %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("token file: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// corruptTokenFileError is a token file that is not valid JSON.
type corruptTokenFileError struct {
	path string
	err  error
}

func (e *corruptTokenFileError) Error() string {
	return fmt.Sprintf("token file %s is not valid JSON: %v", e.path, e.err)
}

func (e *corruptTokenFileError) Unwrap() error { return e.err }

// read returns the file's tokens; a missing file holds none.
func (s *fileTokenStore) read() (map[string]StoredToken, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return make(map[string]StoredToken), nil
	}
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	m := make(map[string]StoredToken)
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, &corruptTokenFileError{path: s.path, err: err}
	}
	return m, nil
}

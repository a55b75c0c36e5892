package oauthflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// NewFileStore returns a Store that keeps tokens in one JSON file at path,
// readable only by the user (mode 0600, directory 0700). Each save reads
// the file, changes one entry and replaces the file atomically, under a
// lock on path+".lock" (on Unix; a save gives up when its context ends
// while another process holds the lock), so stores in several goroutines
// or processes do not lose each other's tokens. A file that is not valid
// JSON is moved aside to path+".corrupt" on the next save; any other read
// error is returned. It is an Updater: processes sharing the file refresh
// a token one at a time, under the same lock.
func NewFileStore(path string) Updater {
	return &fileStore{path: path, sem: make(chan struct{}, 1)}
}

// fileStore is the Store NewFileStore returns.
type fileStore struct {
	path string
	sem  chan struct{} // held within this store; the file lock is across stores
}

// Load returns the token the file holds for key, or nil. The file is
// replaced atomically, so it needs no lock.
func (s *fileStore) Load(_ context.Context, key string) (*StoredToken, error) {
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

// Save writes t for key into the file, keeping the other entries.
func (s *fileStore) Save(ctx context.Context, key string, t *StoredToken) error {
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	return s.write(key, t)
}

// Update holds the file's lock while it reads the token of key, calls fn
// and writes what fn returns. The lock is the operating system's (flock):
// it is held until Update returns, or until the process ends, so it
// cannot pass to another process while fn runs.
func (s *fileStore) Update(ctx context.Context, key string, fn func(context.Context, *StoredToken) (*StoredToken, error)) error {
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := s.Load(ctx, key)
	if err != nil {
		return err
	}
	next, err := fn(ctx, cur)
	if err != nil {
		return fmt.Errorf("token file %s: updating the token: %w", s.path, err)
	}
	if next == nil {
		return nil
	}
	return s.write(key, next)
}

// lock takes the store's semaphore and the file lock, waiting until ctx ends.
func (s *fileStore) lock(ctx context.Context) (unlock func(), err error) {
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("token file %s is being updated: %w", s.path, context.Cause(ctx))
	}
	funlock, err := lockFile(ctx, s.path+".lock")
	if err != nil {
		<-s.sem
		return nil, fmt.Errorf("token file: %w", err)
	}
	return func() { funlock(); <-s.sem }, nil
}

// write replaces the entry of key in the file; the caller holds the lock.
func (s *fileStore) write(key string, t *StoredToken) error {
	m, err := s.read()
	var bad *corruptFileError
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

// corruptFileError is a token file that is not valid JSON.
type corruptFileError struct {
	path string
	err  error
}

func (e *corruptFileError) Error() string {
	return fmt.Sprintf("token file %s is not valid JSON: %v", e.path, e.err)
}

func (e *corruptFileError) Unwrap() error { return e.err }

// read returns the file's tokens; a missing file holds none.
func (s *fileStore) read() (map[string]StoredToken, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return make(map[string]StoredToken), nil
	}
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	m := make(map[string]StoredToken)
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, &corruptFileError{path: s.path, err: err}
	}
	return m, nil
}

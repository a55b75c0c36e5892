package mcpadapter

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// serverIdentity names the server a client talks to: a hash of its URL
// (and of this host's name, for a loopback URL) or of this host's name and
// its resolved command line, absolute directory and environment; an
// in-process server is known to one Client only.
func serverIdentity(ep *endpoint, host string) string {
	h := sha256.New()
	switch ep.kind {
	case kindStdio:
		dir := absDir(ep.command.Dir)
		writeField(h, "stdio")
		writeField(h, host)
		writeField(h, ep.command.Path)
		writeField(h, resolveExecutable(ep.command.Path, dir))
		writeField(h, dir)
		writeField(h, strconv.Itoa(len(ep.command.Args)))
		for _, a := range ep.command.Args {
			writeField(h, a)
		}
		env := slices.Clone(ep.command.Env)
		slices.Sort(env)
		for _, e := range env {
			writeField(h, e)
		}
		if len(ep.command.InheritEnv) > 0 {
			// Which of this process's variables it gets (by name: their
			// values may be secrets).
			writeField(h, "inheritEnv")
			names := slices.Clone(ep.command.InheritEnv)
			slices.Sort(names)
			for _, n := range names {
				writeField(h, n)
			}
		}
	case kindStreamable, kindSSE:
		writeField(h, "http")
		writeField(h, ep.url)
		if isLocalURL(ep.url) {
			// localhost here is not localhost on another machine
			// sharing the store.
			writeField(h, host)
		}
	default:
		return "c" + randomID()
	}
	return "s" + hex.EncodeToString(h.Sum(nil))[:32]
}

// absDir returns the absolute directory a process started with Dir dir
// runs in: this process's working directory when dir is "".
func absDir(dir string) string {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return ""
		}
		return wd
	}
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// resolveExecutable returns the file a Command with Path path and absolute
// Dir dir runs: path found in PATH when it names no directory, path
// relative to dir when it is relative. It returns path itself when the
// lookup fails (the connect will say why).
func resolveExecutable(path, dir string) string {
	if !strings.ContainsRune(path, '/') && !strings.ContainsRune(path, filepath.Separator) {
		if p, err := exec.LookPath(path); err == nil {
			if abs, err := filepath.Abs(p); err == nil {
				return abs
			}
			return p
		}
		return path
	}
	if !filepath.IsAbs(path) && dir != "" {
		return filepath.Join(dir, path)
	}
	return path
}

// hostname returns this host's name, or "" if it is not known.
func hostname() string {
	h, _ := os.Hostname()
	return h
}

// isLocalURL reports whether u names this host: localhost, a .localhost
// name, or a loopback or unspecified IP address.
func isLocalURL(u string) bool {
	pu, err := url.Parse(u)
	if err != nil {
		return false
	}
	host := strings.ToLower(strings.TrimSuffix(pu.Hostname(), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}

// identityPartition returns the partition of the private entries of a
// client with opts: a hash of the credentials it sends when this package
// knows them all, else an id of its own.
func identityPartition(ep *endpoint, opts *ClientOptions) string {
	if ep.kind != kindStreamable && ep.kind != kindSSE {
		// A local process or an in-process server: what it tells this
		// Client privately depends on more than this package sees (the
		// environment it inherits, the files it reads), so it is never
		// shared, whatever the Store.
		return "l" + randomID()
	}
	token := ""
	switch a := opts.Auth.(type) {
	case nil:
	case bearerAuth:
		token = string(a)
	default:
		return "r" + randomID()
	}
	if opts.OAuthHandler != nil || opts.HTTPClient != nil {
		return "r" + randomID()
	}
	h := sha256.New()
	writeField(h, "bearer")
	writeField(h, token)
	keys := make([]string, 0, len(opts.Headers))
	for k := range opts.Headers {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		return strings.Compare(http.CanonicalHeaderKey(a), http.CanonicalHeaderKey(b))
	})
	for _, k := range keys {
		writeField(h, http.CanonicalHeaderKey(k))
		writeField(h, opts.Headers[k])
	}
	return "u" + hex.EncodeToString(h.Sum(nil))[:32]
}

// writeField writes s to h so that no two sequences of fields hash alike.
func writeField(h hash.Hash, s string) {
	fmt.Fprintf(h, "%d:%s,", len(s), s)
}

// randomID returns 128 random bits in hex.
func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

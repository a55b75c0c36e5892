package cache

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"maps"
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

// A Server is what names a server: the command line of a stdio server,
// or the URL of an HTTP one.
type Server struct {
	// Stdio and HTTP say how the server is reached; neither means
	// in-process.
	Stdio, HTTP bool
	// Path, Args, Env, InheritEnv and Dir are a stdio server's command.
	Path                  string
	Args, Env, InheritEnv []string
	Dir                   string
	// URL is an HTTP server's endpoint.
	URL string
}

// Credentials are what a client sends an HTTP server to say who it is.
type Credentials struct {
	// Known says this package sees every credential the client sends: no
	// credentials, or a bearer token and static headers only (not an
	// OAuth flow, a custom HTTP client or an auth function).
	Known bool
	// Token is the bearer token ("" for none), and Headers the static
	// headers.
	Token   string
	Headers map[string]string
}

// ServerID names srv for the keys of every client that talks to it: a
// hash of its URL (and of this host's name, for a loopback URL) or of this
// host's name and its resolved command line, absolute directory and
// environment; an in-process server is known to one client only.
func ServerID(srv Server) string { return serverID(srv, hostname()) }

// serverID is ServerID on the host named host.
func serverID(srv Server, host string) string {
	h := sha256.New()
	switch {
	case srv.Stdio:
		dir := absDir(srv.Dir)
		writeField(h, "stdio")
		writeField(h, host)
		writeField(h, srv.Path)
		writeField(h, resolveExecutable(srv.Path, dir))
		writeField(h, dir)
		writeField(h, strconv.Itoa(len(srv.Args)))
		for _, a := range srv.Args {
			writeField(h, a)
		}
		env := slices.Clone(srv.Env)
		slices.Sort(env)
		for _, e := range env {
			writeField(h, e)
		}
		if len(srv.InheritEnv) > 0 {
			// Which of this process's variables it gets (by name: their
			// values may be secrets).
			writeField(h, "inheritEnv")
			names := slices.Clone(srv.InheritEnv)
			slices.Sort(names)
			for _, n := range names {
				writeField(h, n)
			}
		}
	case srv.HTTP:
		writeField(h, "http")
		writeField(h, srv.URL)
		if isLocalURL(srv.URL) {
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

// PrivatePartition returns the partition of the private entries of a
// client of srv that sends cred: a hash of the credentials when this
// package knows them all, else an id of its own.
func PrivatePartition(srv Server, cred Credentials) string {
	if !srv.HTTP {
		// A local process or an in-process server: what it tells this
		// Client privately depends on more than this package sees (the
		// environment it inherits, the files it reads), so it is never
		// shared, whatever the Store.
		return "l" + randomID()
	}
	if !cred.Known {
		return "r" + randomID()
	}
	h := sha256.New()
	writeField(h, "bearer")
	writeField(h, cred.Token)
	keys := make([]string, 0, len(cred.Headers))
	for k := range cred.Headers {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		return strings.Compare(http.CanonicalHeaderKey(a), http.CanonicalHeaderKey(b))
	})
	for _, k := range keys {
		writeField(h, http.CanonicalHeaderKey(k))
		writeField(h, cred.Headers[k])
	}
	return "u" + hex.EncodeToString(h.Sum(nil))[:32]
}

// partition returns the partition of the private entries of ctx's
// principal: the client's own when there is none, else the client's joined
// with a hash of the principal and its headers (which may say who calls,
// too).
func (rc *Cache) partition(ctx context.Context) string {
	if rc.principal == nil {
		return rc.private
	}
	principal, headers := rc.principal(ctx)
	if principal == "" && len(headers) == 0 {
		return rc.private
	}
	h := sha256.New()
	writeField(h, rc.private)
	writeField(h, principal)
	for _, k := range slices.Sorted(maps.Keys(headers)) {
		writeField(h, http.CanonicalHeaderKey(k))
		writeField(h, headers[k])
	}
	return rc.private + "/p" + hex.EncodeToString(h.Sum(nil))[:32]
}

// hasIdentity reports whether ctx's request is made for a principal or
// with identity headers.
func (rc *Cache) hasIdentity(ctx context.Context) bool {
	if rc.principal == nil {
		return false
	}
	principal, headers := rc.principal(ctx)
	return principal != "" || len(headers) > 0
}

// publicPart returns the partition of the public entries ctx's request
// may share: the one of every request without identity headers, else one
// per set of identity headers, since a server may tell tenants apart by a
// header on one URL (the principal's name alone changes nothing the server
// sees, so it does not divide public entries).
func (rc *Cache) publicPart(ctx context.Context) string {
	if rc.principal == nil {
		return publicPartition
	}
	_, headers := rc.principal(ctx)
	if len(headers) == 0 {
		return publicPartition
	}
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(headers)) {
		writeField(h, http.CanonicalHeaderKey(k))
		writeField(h, headers[k])
	}
	return publicPartition + "/h" + hex.EncodeToString(h.Sum(nil))[:32]
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

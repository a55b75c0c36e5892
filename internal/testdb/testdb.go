// Package testdb starts real Redis and PostgreSQL servers for tests of the
// store modules: each server is a process of its own, on 127.0.0.1, on a
// free port, with its data in a temporary directory, stopped when the test
// ends. A test can stop a server and start it again (same port, same
// data) to see what a store does while its database is away.
//
// The servers are Debian's redis-server and postgresql packages (.ci/run
// installs them). When a binary is missing the test fails under CI
// (CI=true) and is skipped elsewhere, with a message saying what to
// install.
package testdb

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startTimeout bounds a server's start (initdb included) and its stop.
const startTimeout = 90 * time.Second

// Server is one database server process.
type Server struct {
	// Addr is host:port on 127.0.0.1.
	Addr string
	// URL is the address as a connection URL: redis://127.0.0.1:PORT/0 or
	// postgres://postgres@127.0.0.1:PORT/postgres?sslmode=disable.
	URL string

	dir   string
	argv  []string
	ready func() error
	cmd   *exec.Cmd
	done  chan struct{}
	log   *os.File
	stop  os.Signal
	// asServer runs the server as user nobody when the test runs as root.
	asServer bool
}

// require finds bin (a name on PATH or an absolute path) or ends the test.
func require(t testing.TB, bin, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(bin)
	if err == nil {
		return p
	}
	msg := fmt.Sprintf("%s not found (%v): install Debian's %s package (apt-get install -y %s)", bin, err, pkg, pkg)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// freeAddr returns a port on 127.0.0.1 that was free a moment ago.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Redis starts a redis-server that keeps its data in an append-only file
// written at every command, so a Stop and Start keep what was written.
func Redis(t testing.TB) *Server {
	t.Helper()
	return startRedis(t)
}

// startRedis starts a redis-server with extra arguments.
func startRedis(t testing.TB, extra ...string) *Server {
	t.Helper()
	bin := require(t, "redis-server", "redis-server")
	addr := freeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	s := &Server{Addr: addr, URL: "redis://" + addr + "/0", dir: t.TempDir(), stop: syscall.SIGTERM}
	s.argv = []string{bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
		"--appendfsync", "always", "--dir", s.dir, "--daemonize", "no", "--protected-mode", "yes"}
	s.argv = append(s.argv, extra...)
	s.ready = s.pingRedis
	s.startOrFail(t)
	return s
}

// pgBin finds a PostgreSQL server binary: on PATH, or in Debian's
// /usr/lib/postgresql/VERSION/bin (newest version first).
func pgBin(t testing.TB, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		if p := filepath.Join(d, name); fileExists(p) {
			return p
		}
	}
	return require(t, name, "postgresql")
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// Postgres runs initdb in a temporary directory and starts a postgres
// server on it, trusting local connections of user "postgres". Running as
// root, the server runs as user nobody (postgres refuses root).
func Postgres(t testing.TB) *Server {
	t.Helper()
	initdb, postgres, isready := pgBin(t, "initdb"), pgBin(t, "postgres"), pgBin(t, "pg_isready")
	addr := freeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	// Not t.TempDir: user nobody must reach it, so not under a 0700 parent.
	dir, err := os.MkdirTemp("", "mcpadapter-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	s := &Server{Addr: addr, URL: "postgres://postgres@" + addr + "/postgres?sslmode=disable", dir: dir, stop: syscall.SIGINT, asServer: true}
	if err := chownForServer(s.dir); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(s.dir, "data")
	cmd := exec.Command(initdb, "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync")
	cmd.SysProcAttr = serverAttr(true)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	s.argv = []string{postgres, "-D", data, "-k", s.dir, "-p", port, "-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off", "-c", "max_connections=50"}
	s.ready = func() error {
		out, err := exec.Command(isready, "-q", "-h", "127.0.0.1", "-p", port, "-U", "postgres").CombinedOutput()
		if err != nil {
			return fmt.Errorf("pg_isready: %v %s", err, out)
		}
		return nil
	}
	s.startOrFail(t)
	return s
}

func (s *Server) startOrFail(t testing.TB) {
	t.Helper()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
}

// Start starts the server (again), on the same port with the same data,
// and waits until it answers.
func (s *Server) Start() error {
	if s.cmd != nil {
		return fmt.Errorf("%s: already running", s.Addr)
	}
	log, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = serverAttr(s.asServer)
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting %s: %w", s.argv[0], err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.cmd, s.done, s.log = cmd, done, log
	deadline := time.Now().Add(startTimeout)
	for {
		err := s.ready()
		if err == nil {
			return nil
		}
		select {
		case <-done:
			s.cmd = nil
			log.Close()
			return fmt.Errorf("%s exited at start: %s", s.argv[0], s.tail())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = s.Stop()
			return fmt.Errorf("%s did not answer on %s within %v: %v\n%s", s.argv[0], s.Addr, startTimeout, err, s.tail())
		}
	}
}

// Stop stops the server and waits for it to exit (a fast shutdown: open
// connections are closed). It does nothing if the server is stopped.
func (s *Server) Stop() error {
	if s.cmd == nil {
		return nil
	}
	defer func() { s.cmd = nil; s.log.Close() }()
	_ = s.cmd.Process.Signal(s.stop)
	select {
	case <-s.done:
		return nil
	case <-time.After(startTimeout):
		_ = s.cmd.Process.Kill()
		<-s.done
		return errors.New(s.argv[0] + " did not stop in time; killed")
	}
}

// tail returns the last lines of the server's log.
func (s *Server) tail() string {
	f, err := os.Open(filepath.Join(s.dir, "server.log"))
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > 20 {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// pingRedis sends PING and expects PONG.
func (s *Server) pingRedis() error {
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

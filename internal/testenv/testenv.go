package testenv

import (
	"bufio"
	"context"
	"encoding/base64"
	"io"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Pinned npm package names (versions are in npm/package.json).
const (
	EverythingPackage  = "@modelcontextprotocol/server-everything"
	ConformancePackage = "@modelcontextprotocol/conformance"
)

// Transports accepted by server-everything's CLI (dist/index.js argv[2]).
const (
	TransportStdio      = "stdio"
	TransportSSE        = "sse"
	TransportStreamable = "streamableHttp"
)

// StartTimeout bounds how long StartEverythingHTTP waits for the server.
const StartTimeout = 30 * time.Second

// Node returns the absolute path of a Node 22 binary ($MCPADAPTER_NODE, or
// installed on demand). Tests that need it (the npm peers) are skipped
// with -short; if none can be had, see Missing.
func Node(t testing.TB) string {
	t.Helper()
	SkipShort(t, "a test of the npm MCP peers (Node 22)")
	nodeOnce.Do(func() {
		nodePath, nodeErr = InstallNode(context.Background(), t.Logf)
	})
	if nodeErr != nil {
		Missing(t, "%v", nodeErr)
	}
	return nodePath
}

// NPMDir returns a directory whose node_modules holds the pinned npm packages
// (server-everything and conformance), installed on demand.
func NPMDir(t testing.TB) string {
	t.Helper()
	node := Node(t)
	npmOnce.Do(func() {
		npmDir, npmErr = InstallNPM(context.Background(), node, t.Logf)
	})
	if npmErr != nil {
		Missing(t, "%v", npmErr)
	}
	return npmDir
}

// EverythingEntry returns the absolute path of server-everything's JS entry
// point (its package.json bin "mcp-server-everything": dist/index.js).
func EverythingEntry(t testing.TB) string {
	t.Helper()
	p, err := PackageBin(NPMDir(t), EverythingPackage, "mcp-server-everything")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ConformanceEntry returns the absolute path of the conformance CLI's JS
// entry point (bin "conformance": dist/index.js); run it with Node(t).
func ConformanceEntry(t testing.TB) string {
	t.Helper()
	p, err := PackageBin(NPMDir(t), ConformancePackage, "conformance")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// EverythingStdio returns how to launch server-everything over stdio: path is
// the Node 22 binary, args are [<entry>/dist/index.js, "stdio"], and env is
// the complete environment for the child (os.Environ() with Node 22's
// directory first in PATH), suitable for exec.Cmd.Env.
func EverythingStdio(t testing.TB) (path string, args []string, env []string) {
	t.Helper()
	node := Node(t)
	entry := EverythingEntry(t)
	return node, []string{entry, TransportStdio}, NodeEnv(node)
}

// loopbackPreload is imported (node --import) into server-everything's HTTP
// transports. Their express app calls app.listen(process.env.PORT || 3001),
// which binds every interface; the preload forces the host to 127.0.0.1 and,
// once listening, reports the real address on stderr. With PORT=0 the kernel
// picks a free port, so there is no port race between parallel tests.
const loopbackPreload = `import net from "node:net";
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const a0 = args[0];
  let patched = false;
  if (typeof a0 === "number" || (typeof a0 === "string" && /^\d+$/.test(a0))) {
    const rest = args.slice(1);
    if (typeof rest[0] === "string") rest.shift();
    args = [Number(a0), "127.0.0.1", ...rest];
    patched = true;
  } else if (a0 && typeof a0 === "object" && !(a0 instanceof net.Server) && a0.port !== undefined && a0.path === undefined) {
    args = [{ ...a0, host: "127.0.0.1" }, ...args.slice(1)];
    patched = true;
  }
  if (patched) {
    this.once("listening", () => {
      const addr = this.address();
      process.stderr.write("MCPADAPTER_TESTENV_LISTENING " + addr.address + ":" + addr.port + "\n");
    });
  }
  return listen.apply(this, args);
};
`

var listeningRE = regexp.MustCompile(`MCPADAPTER_TESTENV_LISTENING (127\.0\.0\.1:\d+)`)

// StartEverythingHTTP starts server-everything with transport "sse" or
// "streamableHttp" as a child process (own process group) listening on a free
// port of 127.0.0.1 only, waits until it accepts connections, and registers a
// cleanup that kills the process group and waits for it. It returns the
// endpoint URL: http://127.0.0.1:PORT/sse for "sse" (the client then POSTs to
// the /message?sessionId=... endpoint the server announces) and
// http://127.0.0.1:PORT/mcp for "streamableHttp".
//
// It is one function of about 90 lines on purpose: starting the process,
// reading its stderr for the port and waiting for it share the channels
// and the cleanup, and read best in the order they happen.
func StartEverythingHTTP(t testing.TB, transport string) string {
	t.Helper()
	var path string
	switch transport {
	case TransportSSE:
		path = "/sse"
	case TransportStreamable:
		path = "/mcp"
	default:
		t.Fatalf("testenv: StartEverythingHTTP: transport %q, want %q or %q", transport, TransportSSE, TransportStreamable)
	}
	node := Node(t)
	entry := EverythingEntry(t)

	preload := "data:text/javascript;base64," + base64.StdEncoding.EncodeToString([]byte(loopbackPreload))
	cmd := exec.Command(node, "--import", preload, entry, transport)
	cmd.Env = append(NodeEnv(node), "PORT=0")
	// Own process group, so cleanup kills the whole tree; Pdeathsig is a
	// safety net should the test binary die without running cleanups.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out := &tailBuffer{max: 64 << 10}
	cmd.Stdout = out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("testenv: starting server-everything %s: %v", transport, err)
	}
	pgid := cmd.Process.Pid

	addrc := make(chan string, 1)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			out.Write([]byte(line + "\n"))
			if m := listeningRE.FindStringSubmatch(line); m != nil {
				select {
				case addrc <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(out, stderr)
	}()
	exited := make(chan struct{})
	var waitErr error
	go func() {
		<-copied // Wait closes the pipe: read it all first
		waitErr = cmd.Wait()
		close(exited)
	}()
	stop := func() {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-exited
	}
	t.Cleanup(stop)

	deadline := time.NewTimer(StartTimeout)
	defer deadline.Stop()
	var addr string
	select {
	case addr = <-addrc:
	case <-exited:
		t.Fatalf("testenv: server-everything %s exited before listening: %v\noutput:\n%s", transport, waitErr, out.String())
	case <-deadline.C:
		stop()
		t.Fatalf("testenv: server-everything %s did not listen within %v\noutput:\n%s", transport, StartTimeout, out.String())
	}
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-exited:
			t.Fatalf("testenv: server-everything %s exited: %v\noutput:\n%s", transport, waitErr, out.String())
		case <-deadline.C:
			stop()
			t.Fatalf("testenv: server-everything %s does not accept connections on %s within %v: %v\noutput:\n%s", transport, addr, StartTimeout, err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return "http://" + addr + path
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.ToValidUTF8(string(b.buf), "?")
}

// NPMServer is one pinned npm MCP server that speaks stdio (versions in
// npm/package.json): its package, its bin name and the arguments it needs.
type NPMServer struct {
	Package string
	Bin     string
	Args    []string
}

// NPMServers are the pinned npm MCP servers besides server-everything, as
// the schema corpus of package schemaprofile starts them: none needs the
// network or a key to list its tools. Args naming a directory use "{dir}",
// which StdioCommand replaces with a temporary directory.
func NPMServers() []NPMServer {
	return []NPMServer{
		{Package: "@modelcontextprotocol/server-filesystem", Bin: "mcp-server-filesystem", Args: []string{"{dir}"}},
		{Package: "@modelcontextprotocol/server-memory", Bin: "mcp-server-memory"},
		{Package: "@modelcontextprotocol/server-sequential-thinking", Bin: "mcp-server-sequential-thinking"},
		{Package: "@modelcontextprotocol/server-github", Bin: "mcp-server-github"},
		{Package: "@notionhq/notion-mcp-server", Bin: "notion-mcp-server"},
		{Package: "@playwright/mcp", Bin: "playwright-mcp", Args: []string{"--headless", "--isolated"}},
	}
}

// StdioCommand returns how to launch s over stdio with Node 22: the node
// binary, [entry, args...] and the child's environment.
func (s NPMServer) StdioCommand(t testing.TB) (path string, args []string, env []string) {
	t.Helper()
	node := Node(t)
	entry, err := PackageBin(NPMDir(t), s.Package, s.Bin)
	if err != nil {
		t.Fatal(err)
	}
	args = []string{entry}
	for _, a := range s.Args {
		if a == "{dir}" {
			a = t.TempDir()
		}
		args = append(args, a)
	}
	return node, args, NodeEnv(node)
}

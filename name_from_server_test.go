package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// countedServer returns a command that runs mcptestserver (a go-sdk
// server) calling itself name at era, through a shell that appends a
// line to the returned file each time the server is started.
func countedServer(t *testing.T, name string, era testserver.Era) (mcpadapter.Command, string) {
	t.Helper()
	count := filepath.Join(t.TempDir(), "starts")
	return mcpadapter.Command{Path: "/bin/sh", Args: []string{"-c", `echo start >> "$0"; exec "$@"`, count,
		testserver.Build(t), "-era", era.String(), "-name", name}}, count
}

// starts returns how many times the server of count was started.
func starts(t *testing.T, count string) int {
	t.Helper()
	b, err := os.ReadFile(count)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "start\n")
}

// TestNameFromServer: with NameFromServer, a command target is named by
// its serverInfo.name, read from the one connection the client makes (the
// server starts once), in its tools, its errors, its logs, its trace
// (the handshake's messages included) and its stderr lines; the name
// never changes after.
func TestNameFromServer(t *testing.T) {
	for _, era := range []testserver.Era{testserver.Legacy, testserver.Modern} {
		t.Run(era.String(), func(t *testing.T) {
			cmd, count := countedServer(t, "weather.example/Server", era)
			cmd.Args = append(cmd.Args, "-stderr", "3")
			var logs syncBuffer
			var stderrMu sync.Mutex
			stderrBy := map[string]int{}
			c, err := mcpadapter.NewClient(cmd, &mcpadapter.ClientOptions{
				NameFromServer: true,
				Trace:          true,
				Logger:         slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
				StderrHandler: func(server, line string) {
					stderrMu.Lock()
					stderrBy[server]++
					stderrMu.Unlock()
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ad, err := mcpadapter.New(c, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			tools, err := ad.Tools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			const want = "weather_example_Server"
			for _, tool := range tools {
				if tool.Server != want {
					t.Fatalf("tool %s of server %q, want %q", tool.Name, tool.Server, want)
				}
			}
			if c.Name() != want || c.String() != "mcpadapter.Client("+want+")" {
				t.Errorf("Name %q, String %q", c.Name(), c.String())
			}
			info, err := c.Connect(ctx)
			if err != nil || info.Name != want {
				t.Fatalf("Connect: %+v, %v", info, err)
			}
			if _, err := ad.Tools(ctx); err != nil { // a second listing: the same connection
				t.Fatal(err)
			}
			if n := starts(t, count); n != 1 {
				t.Errorf("the server was started %d times, want 1", n)
			}
			trace := logs.String()
			if !strings.Contains(trace, `server=`+want+` message="{\"id\":1,`) || !strings.Contains(trace, `tools/list`) {
				t.Errorf("the trace lacks the first message under the server's name:\n%.2000s", trace)
			}
			for _, line := range strings.Split(strings.TrimSpace(trace), "\n") {
				if !strings.Contains(line, "server="+want+" ") || strings.Count(line, "server=") != 1 {
					t.Errorf("a record not under the server's name: %.300s", line)
				}
			}
			waitUntil(t, func() bool {
				stderrMu.Lock()
				defer stderrMu.Unlock()
				return stderrBy[want] == 3
			})
			stderrMu.Lock()
			if len(stderrBy) != 1 {
				t.Errorf("stderr lines by server: %v", stderrBy)
			}
			stderrMu.Unlock()

			// After Close the next request reconnects (a second start) and
			// keeps the name.
			c.Close()
			if _, err := c.Connect(ctx); err != nil {
				t.Fatal(err)
			}
			if c.Name() != want || starts(t, count) != 2 {
				t.Errorf("after a reconnect: %q, %d starts", c.Name(), starts(t, count))
			}
		})
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for range 200 {
		if cond() {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("condition not met within 5s")
}

// TestNameFromServerHostile: a server's serverInfo.name is the server's
// to choose; whatever it says, the client's name is a safe tool prefix
// (^[A-Za-z0-9_-]{1,64}$), the command's own name when the server's has
// nothing to make one of.
func TestNameFromServerHostile(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	for _, tc := range []struct{ give, want string }{
		{strings.Repeat("a", 10_000), strings.Repeat("a", 64)},
		{"evil\nname\r\n", "evil_name"},
		{"名前", ""},
		{"../", ""},
		{"../../etc/passwd", "etc_passwd"},
		{"caf\u00e9-server", "caf__-server"},
		{"\u202eevil", "evil"},
		{"   ", ""},
	} {
		cmd, count := countedServer(t, tc.give, testserver.Legacy)
		want := tc.want
		if want == "" {
			want = cmd.Name()
		}
		c, err := mcpadapter.NewClient(cmd, &mcpadapter.ClientOptions{NameFromServer: true})
		if err != nil {
			t.Fatal(err)
		}
		info, err := c.Connect(ctx)
		if err != nil {
			t.Fatalf("%q: %v", tc.give, err)
		}
		if got := c.Name(); got != want || info.Name != want || !valid.MatchString(got) {
			t.Errorf("serverInfo.name %q: named %q (info %q), want %q", tc.give, got, info.Name, want)
		}
		if n := starts(t, count); n != 1 {
			t.Errorf("%q: %d starts", tc.give, n)
		}
		c.Close()
	}
}

// rawServer is a stdio MCP server written in sh that answers the
// handshake with serverInfo (a JSON object, or "" for none), counting
// its starts in the returned file.
func rawServer(t *testing.T, serverInfo string) (mcpadapter.Command, string) {
	t.Helper()
	dir := t.TempDir()
	count := filepath.Join(dir, "starts")
	info := ""
	if serverInfo != "" {
		info = `,"serverInfo":` + serverInfo
	}
	script := `echo start >> "$0"
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  case "$line" in
  *'"server/discover"'*) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}\n' "$id" ;;
  *'"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$id" "$1" ;;
  *'"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"noop","inputSchema":{"type":"object"}}]}}\n' "$id" ;;
  *'"id":'*) printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id" ;;
  esac
done`
	result := `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}}` + info + `}`
	return mcpadapter.Command{Path: "/bin/sh", Args: []string{"-c", script, count, result}}, count
}

// TestNameFromServerNone: a server whose serverInfo has no name, an
// empty one, or no serverInfo at all is named by its command.
func TestNameFromServerNone(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, info := range []string{`{"version":"1"}`, `{"name":"","version":"1"}`, `{"name":"\n\u0000../","version":"1"}`, ""} {
		cmd, count := rawServer(t, info)
		c, err := mcpadapter.NewClient(cmd, &mcpadapter.ClientOptions{NameFromServer: true})
		if err != nil {
			t.Fatal(err)
		}
		ad, err := mcpadapter.New(c, nil)
		if err != nil {
			t.Fatal(err)
		}
		tools, err := ad.Tools(ctx)
		if err != nil {
			t.Fatalf("serverInfo %s: %v", info, err)
		}
		if len(tools) != 1 || tools[0].Server != cmd.Name() || c.Name() != cmd.Name() || starts(t, count) != 1 {
			t.Errorf("serverInfo %s: %d tools, server %q, Name %q, want %q; %d starts", info, len(tools), tools[0].Server, c.Name(), cmd.Name(), starts(t, count))
		}
		c.Close()
	}
}

// TestNameFromServerSettlesOnce: a name read before the first connection
// is the command's own, and the connection does not change it; a client
// that names its server (Name) or a URL target is not affected; a failed
// first connection settles the command's name.
func TestNameFromServerSettlesOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, _ := countedServer(t, "srv", testserver.Legacy)
	c := nameFromServerClient(t, cmd)
	early := c.Name()
	if early != cmd.Name() {
		t.Fatalf("Name before connecting %q, want %q", early, cmd.Name())
	}
	info, err := c.Connect(ctx)
	if err != nil || info.Name != early || c.Name() != early {
		t.Fatalf("after connecting: %+v %v, Name %q: the name changed from %q", info, err, c.Name(), early)
	}

	named, err := mcpadapter.NewClient(cmd, &mcpadapter.ClientOptions{NameFromServer: true, Name: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	defer named.Close()
	if info, err := named.Connect(ctx); err != nil || info.Name != "mine" {
		t.Fatalf("Name set: %+v %v", info, err)
	}

	missing := mcpadapter.Command{Path: filepath.Join(t.TempDir(), "no-such-server")}
	bad, err := mcpadapter.NewClient(missing, &mcpadapter.ClientOptions{NameFromServer: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Connect(ctx)
	var te *mcpadapter.TransportError
	if !errors.As(err, &te) || te.Server != missing.Name() || bad.Name() != missing.Name() {
		t.Fatalf("a server that does not start: %v (%+v), Name %q", err, te, bad.Name())
	}
}

// TestNameFromServerConcurrent: many goroutines use a fresh client at
// once (under -race): one start, one name, the same for everyone.
func TestNameFromServerConcurrent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, count := countedServer(t, "busy", testserver.Modern)
	c, err := mcpadapter.NewClient(cmd, &mcpadapter.ClientOptions{NameFromServer: true, Trace: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ad, err := mcpadapter.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	names := make([]string, 16)
	for i := range names {
		wg.Go(func() {
			tools, err := ad.Tools(ctx)
			if err != nil || len(tools) == 0 {
				t.Errorf("Tools: %v", err)
				return
			}
			names[i] = tools[0].Server
			if i%2 == 0 {
				names[i] = c.Name()
			}
		})
	}
	wg.Wait()
	for _, n := range names {
		if n != "busy" {
			t.Fatalf("names %v", names)
		}
	}
	if n := starts(t, count); n != 1 {
		t.Errorf("%d starts", n)
	}
}

// TestNameFromServerGroup: in a group, each server's tools are prefixed
// with the name it gives itself, the same in every listing; two servers
// that give the same name both fail, each error naming both commands.
func TestNameFromServerGroup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	newClient := func(name string, era testserver.Era) (*mcpadapter.Client, string) {
		cmd, count := countedServer(t, name, era)
		c, err := mcpadapter.NewClient(cmd, &mcpadapter.ClientOptions{NameFromServer: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, count
	}
	a, countA := newClient("alpha", testserver.Legacy)
	// The same era: a group pulls a 2026-07-28 server down to the
	// handshake era of an older one by connecting to it again.
	b, countB := newClient("beta", testserver.Legacy)
	g, err := mcpadapter.GroupOf(a, b)
	if err != nil {
		t.Fatal(err)
	}
	ad, err := mcpadapter.New(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		tools, err := ad.Tools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var alpha, beta bool
		for _, tool := range tools {
			alpha = alpha || tool.Name == "alpha_echo"
			beta = beta || tool.Name == "beta_echo"
			if !strings.HasPrefix(tool.Name, "alpha_") && !strings.HasPrefix(tool.Name, "beta_") {
				t.Errorf("tool %q", tool.Name)
			}
		}
		if !alpha || !beta {
			t.Fatalf("no alpha_echo and beta_echo among %d tools", len(tools))
		}
	}
	if starts(t, countA) != 1 || starts(t, countB) != 1 {
		t.Errorf("starts: %d, %d", starts(t, countA), starts(t, countB))
	}

	one, _ := newClient("dup", testserver.Legacy)
	two, _ := newClient("dup", testserver.Modern)
	third, _ := newClient("gamma", testserver.Legacy)
	g, err = mcpadapter.GroupOf(one, two, third)
	if err != nil {
		t.Fatal(err)
	}
	ad, err = mcpadapter.New(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ad.Tools(ctx)
	var ge *mcpadapter.GroupError
	if !errors.As(err, &ge) || len(ge.Failures) != 2 {
		t.Fatalf("two servers named dup: %v", err)
	}
	for _, f := range ge.Failures {
		msg := f.Err.Error()
		if f.Server != "dup" || !strings.Contains(msg, "-era legacy -name dup") || !strings.Contains(msg, "-era modern -name dup") {
			t.Errorf("a collision error that does not name both: %s: %s", f.Server, msg)
		}
	}
	// With SkipUnavailable the third server's tools are still there.
	ad, err = mcpadapter.New(g, &mcpadapter.Options{SkipUnavailable: true})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := ad.Tools(ctx)
	if err != nil || len(tools) == 0 || !strings.HasPrefix(tools[0].Name, "gamma_") {
		t.Fatalf("the rest of the group: %d tools, %v", len(tools), err)
	}
}

// recTelemetry records the operations a client starts.
type recTelemetry struct {
	mu  sync.Mutex
	ops []mcpadapter.Operation
}

func (r *recTelemetry) StartOperation(ctx context.Context, op mcpadapter.Operation) (context.Context, func(mcpadapter.OperationResult)) {
	r.mu.Lock()
	r.ops = append(r.ops, op)
	r.mu.Unlock()
	return ctx, func(mcpadapter.OperationResult) {}
}

func (r *recTelemetry) InjectMeta(context.Context, map[string]any) {}

// TestNameFromServerTelemetry: the connect that names the server is an
// operation with no server name (it is not known when that connect
// starts); every later one has the server's own name, never the command's.
func TestNameFromServerTelemetry(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, count := countedServer(t, "traced", testserver.Legacy)
	tel := &recTelemetry{}
	c, err := mcpadapter.NewClient(cmd, &mcpadapter.ClientOptions{NameFromServer: true, Telemetry: tel})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ad, err := mcpadapter.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := ad.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		if tool.Name == "echo" {
			if _, err := tool.Call(ctx, json.RawMessage(`{"text":"hi"}`)); err != nil {
				t.Fatal(err)
			}
		}
	}
	tel.mu.Lock()
	defer tel.mu.Unlock()
	var methods []string
	for i, op := range tel.ops {
		methods = append(methods, op.Method+"@"+op.Server)
		want := "traced"
		if i == 0 {
			want = ""
		}
		if op.Server != want {
			t.Errorf("operation %d (%s) of server %q, want %q", i, op.Method, op.Server, want)
		}
	}
	if len(tel.ops) < 3 || tel.ops[0].Method != "connect" || starts(t, count) != 1 {
		t.Errorf("operations %v, %d starts", methods, starts(t, count))
	}
}

// nameFromServerClient is a NameFromServer client of cmd, closed when the
// test ends.
func nameFromServerClient(t *testing.T, cmd mcpadapter.Command) *mcpadapter.Client {
	t.Helper()
	c, err := mcpadapter.NewClient(cmd, &mcpadapter.ClientOptions{NameFromServer: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

package replicatest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testdb"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// childEnv carries a child process's childConfig, as JSON.
const childEnv = "MCPADAPTER_REPLICATEST_CHILD"

// childConfig tells a replica process what to do.
type childConfig struct {
	Role   string // "first", "down" or "second"
	Store  string // "redis" or "postgres"
	DB     string // the store's URL
	Modern string // a 2026-07-28 server (streamable HTTP)
	Legacy string // a handshake-era server (streamable HTTP)
	Auth   string // an OAuth-protected 2026-07-28 server
	Out    string // where to write the childReport
	// Interrupts are the first process's, to answer.
	Modern1, Legacy1 outcome
}

// childReport is what a replica process saw.
type childReport struct {
	Modern, Legacy outcome
	ResumeErr      string // "down": why the resume failed
	Tokens         string // the OAuth part: "" or what failed
	Opened         int    // times the user was sent to sign in
	Err            string // a failure before the runs
}

// TestMain runs a replica when started as one by TestTwoReplicas.
func TestMain(m *testing.M) {
	if cfg := os.Getenv(childEnv); cfg != "" {
		os.Exit(childMain(cfg))
	}
	os.Exit(m.Run())
}

// TestTwoReplicas: two processes share one Redis, and again one
// PostgreSQL. A run interrupted in the first resumes in the second
// against a 2026-07-28 server and completes; a public listing the first
// fetched is a cache hit in the second; a token the first refreshed is
// the one the second uses; a handshake-era call parked in the first
// answers, in the second, that it no longer exists; while the store is
// stopped, the resume fails with an error naming the store, and once it
// is back the checkpoint is there.
func TestTwoReplicas(t *testing.T) {
	for _, kind := range []string{"redis", "postgres"} {
		t.Run(kind, func(t *testing.T) { testTwoReplicas(t, kind) })
	}
}

func testTwoReplicas(t *testing.T, kind string) {
	db := startDB(t, kind)
	modern := testserver.StartStreamable(t, testserver.New(testserver.Options{CacheTTLMs: 600_000, CacheScope: "public"}), testserver.Stateless())
	legacy := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	as := testauth.Start(t, testauth.Options{MCP: testserver.New(testserver.Options{})})
	cfg := childConfig{Store: kind, DB: db.URL, Modern: modern.URL, Legacy: legacy.URL, Auth: as.MCPURL}

	cfg.Role = "first"
	first := runChild(t, cfg, nil)
	if len(first.Modern.Interrupts) != 1 || len(first.Legacy.Interrupts) != 1 || first.Tokens != "" || first.Opened != 1 {
		t.Fatalf("first replica: %+v", first)
	}
	if n := countLists(modern); n != 1 {
		t.Errorf("the first replica listed tools %d times, want 1", n)
	}
	if c := as.Counts(); c.Authorizations != 1 || c.Refreshes != 1 {
		t.Errorf("after the first replica, the authorization server counts %+v; want 1 sign-in, 1 refresh", c)
	}
	cfg.Modern1, cfg.Legacy1 = first.Modern, first.Legacy

	// The store goes away while a replica runs: its resume says so, and
	// where.
	cfg.Role = "down"
	down := runChild(t, cfg, func() {
		if err := db.Stop(); err != nil {
			t.Error(err)
		}
	})
	if !strings.Contains(down.ResumeErr, "checkpoint") || !strings.Contains(down.ResumeErr, db.Addr) {
		t.Errorf("resume with the store stopped: %q, want an error naming the checkpoint and %s", down.ResumeErr, db.Addr)
	}
	if err := db.Start(); err != nil {
		t.Fatal(err)
	}

	lists := countLists(modern)
	cfg.Role = "second"
	second := runChild(t, cfg, nil)
	if second.Err != "" || !strings.Contains(second.Modern.Final, "Booked 3 guests (inside) on Sun") || second.Modern.Err != "" {
		t.Errorf("the run resumed in the second replica: %+v", second)
	}
	if n := countLists(modern); n != lists {
		t.Errorf("the second replica listed tools again (%d lists, %d before): the public listing was not a cache hit", n, lists)
	}
	if !strings.Contains(second.Legacy.Final, "not known to this process") {
		t.Errorf("a handshake-era call parked in the first replica, resumed in the second: %+v", second.Legacy)
	}
	if second.Tokens != "" || second.Opened != 0 {
		t.Errorf("the second replica's OAuth: %q, user sent %d times", second.Tokens, second.Opened)
	}
	if c := as.Counts(); c.Authorizations != 1 || c.Refreshes != 1 {
		t.Errorf("after both replicas, the authorization server counts %+v; want 1 sign-in, 1 refresh", c)
	}
}

// startDB starts the database of kind.
func startDB(t testing.TB, kind string) *testdb.Server {
	if kind == "redis" {
		return testdb.Redis(t)
	}
	return testdb.Postgres(t)
}

// countLists counts the tools/list requests srv received.
func countLists(srv *testserver.HTTPServer) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.RPCMethod == "tools/list" {
			n++
		}
	}
	return n
}

// runChild runs this test binary as a replica process doing cfg.Role,
// and returns its report. Once the replica has opened its stores and
// built its agents it says "ready" and waits: between runs then (nil:
// nothing), and the replica goes on.
func runChild(t *testing.T, cfg childConfig, between func()) childReport {
	t.Helper()
	cfg.Out = filepath.Join(t.TempDir(), cfg.Role+".json")
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(b))
	var logs bytes.Buffer
	cmd.Stderr = &logs
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready, _ := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(ready) == "ready" && between != nil {
		between()
	}
	_, _ = io.WriteString(stdin, "go\n")
	_ = stdin.Close()
	_, _ = io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("replica %q: %v (said %q)\n%s", cfg.Role, err, ready, logs.String())
	}
	var rep childReport
	data, err := os.ReadFile(cfg.Out)
	if err == nil {
		err = json.Unmarshal(data, &rep)
	}
	if err != nil {
		t.Fatalf("replica %q wrote no report: %v\n%s", cfg.Role, err, logs.String())
	}
	t.Logf("replica %q: %s\n%s", cfg.Role, data, logs.String())
	return rep
}

// childMain is a replica process: it does cfg's role and writes its
// report. It returns the exit code.
func childMain(cfgJSON string) int {
	var cfg childConfig
	if err := json.Unmarshal([]byte(cfgJSON), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bad child config:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	rep := runRole(ctx, cfg)
	b, _ := json.Marshal(rep)
	if err := os.WriteFile(cfg.Out, b, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

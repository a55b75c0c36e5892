package testserver

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// syncBuffer is a bytes.Buffer safe for concurrent use (process stderr).
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tryConnect connects to the mcptestserver started with args, within d.
// The returned cmd has exited once the error is non-nil.
func tryConnect(t *testing.T, d time.Duration, opts *mcp.ClientSessionOptions, args ...string) (*mcp.ClientSession, *exec.Cmd, *syncBuffer, time.Duration, error) {
	t.Helper()
	cmd := Command(t, args...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	tr := &mcp.CommandTransport{Command: cmd, TerminateDuration: 500 * time.Millisecond}
	start := time.Now()
	cs, err := newClient(nil).Connect(ctx, tr, opts)
	elapsed := time.Since(start)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	} else {
		t.Cleanup(func() {
			if cmd.Process != nil && cmd.ProcessState == nil {
				_ = cmd.Process.Kill()
			}
		})
	}
	return cs, cmd, stderr, elapsed, err
}

var legacyOnly = &mcp.ClientSessionOptions{ProtocolVersion: LegacyVersion}

func TestIgnoreDiscover(t *testing.T) {
	t.Parallel()
	// A go-sdk client waits for server/discover for as long as the Connect
	// context allows, then fails: it does not fall back to initialize.
	_, _, _, elapsed, err := tryConnect(t, 500*time.Millisecond, nil, "-era", "legacy", "-ignore-discover")
	if err == nil {
		t.Fatal("Connect succeeded against a server ignoring server/discover")
	}
	if !errors.Is(err, context.DeadlineExceeded) || elapsed > 5*time.Second {
		t.Errorf("Connect failed after %v with %v (%T), want DeadlineExceeded within the deadline", elapsed, err, err)
	}
	t.Logf("Connect error after %v: %v", elapsed, err)

	// Asking for a handshake-era version skips server/discover entirely.
	cs, _, _, _, err := tryConnect(t, 10*time.Second, legacyOnly, "-era", "legacy", "-ignore-discover")
	if err != nil {
		t.Fatalf("Connect with ProtocolVersion %s: %v", LegacyVersion, err)
	}
	if got := cs.InitializeResult().ProtocolVersion; got != LegacyVersion {
		t.Errorf("negotiated %q", got)
	}
	if got := texts(call(t, cs, "echo", map[string]any{"text": "ok"})); got != "ok" {
		t.Errorf("echo = %q", got)
	}
}

func TestExitOnDiscover(t *testing.T) {
	t.Parallel()
	_, cmd, stderr, elapsed, err := tryConnect(t, 10*time.Second, nil, "-era", "legacy", "-exit-on-discover")
	if err == nil {
		t.Fatal("Connect succeeded against a server exiting on server/discover")
	}
	t.Logf("Connect error after %v: %v (%T); ErrConnectionClosed=%v", elapsed, err, err, errors.Is(err, mcp.ErrConnectionClosed))
	if cmd.ProcessState == nil {
		_ = cmd.Wait()
	}
	if code := cmd.ProcessState.ExitCode(); code != DiscoverExitCode {
		t.Errorf("exit code %d, want %d; stderr:\n%s", code, DiscoverExitCode, stderr)
	}

	// Skipping discover, the same server works.
	cs, _, _, _, err := tryConnect(t, 10*time.Second, legacyOnly, "-era", "legacy", "-exit-on-discover")
	if err != nil {
		t.Fatalf("Connect with ProtocolVersion %s: %v", LegacyVersion, err)
	}
	if got := cs.InitializeResult().ProtocolVersion; got != LegacyVersion {
		t.Errorf("negotiated %q", got)
	}
}

func TestHang(t *testing.T) {
	t.Parallel()
	// A failed Connect closes the transport, and CommandTransport.Close waits
	// for the process: TerminateDuration after closing stdin, then SIGTERM,
	// then TerminateDuration more before SIGKILL. So Connect fails after
	// deadline + TerminateDuration (default 5s!) against a hung server, and
	// deadline + 2×TerminateDuration against one that ignores SIGTERM.
	tests := []struct {
		name string
		args []string
		min  time.Duration
	}{
		{"sigterm", []string{"-hang"}, 300*time.Millisecond + 500*time.Millisecond},
		{"ignore-sigterm", []string{"-hang", "-ignore-sigterm"}, 300*time.Millisecond + 2*500*time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, cmd, _, elapsed, err := tryConnect(t, 300*time.Millisecond, nil, tt.args...)
			if err == nil || elapsed < tt.min || elapsed > tt.min+3*time.Second {
				t.Fatalf("Connect to a hanging server: err=%v after %v, want failure after about %v", err, elapsed, tt.min)
			}
			t.Logf("Connect error after %v: %v; process state %v", elapsed, err, cmd.ProcessState)
		})
	}
}

func TestPollute(t *testing.T) {
	t.Parallel()
	// go-sdk's own stdio transport cannot read past the banner: the
	// handshake fails on its first byte. (The adapter's transport skips
	// such lines; rawstdio_test.go checks the banner on the wire.)
	_, _, _, _, err := tryConnect(t, 10*time.Second, nil, "-pollute")
	if err == nil || !strings.Contains(err.Error(), "invalid character '"+PolluteBanner[:1]+"'") {
		t.Fatalf("Connect to a polluting server with go-sdk's CommandTransport: %v, want it to fail on the banner's first byte", err)
	}
}

func TestCrash(t *testing.T) {
	t.Parallel()
	t.Run("in-process", func(t *testing.T) {
		cs := connect(t, inMemory(t, New(Options{})), nil)
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "crash"})
		if err == nil || !strings.Contains(err.Error(), "crash requested") {
			t.Fatalf("crash in-process: %v", err)
		}
		t.Logf("in-process crash error: %v", err)
	})
	t.Run("process", func(t *testing.T) {
		cs, cmd, stderr, _, err := tryConnect(t, 10*time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "crash"})
		if err == nil {
			t.Fatal("crash call succeeded")
		}
		t.Logf("process crash error: %v (%T); ErrConnectionClosed=%v", err, err, errors.Is(err, mcp.ErrConnectionClosed))
		_ = cs.Close()
		if cmd.ProcessState == nil {
			_ = cmd.Wait()
		}
		if code := cmd.ProcessState.ExitCode(); code != CrashExitCode {
			t.Errorf("exit code %d, want %d", code, CrashExitCode)
		}
		if !strings.Contains(stderr.String(), CrashMessage) {
			t.Errorf("stderr %q lacks %q", stderr, CrashMessage)
		}
	})
}

func TestStderrLines(t *testing.T) {
	t.Parallel()
	cs, _, stderr, _, err := tryConnect(t, 10*time.Second, nil, "-stderr", "3")
	if err != nil {
		t.Fatal(err)
	}
	_ = cs.Close()
	if got, want := stderr.String(), "stderr line 1\nstderr line 2\nstderr line 3\n"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
}

func TestListDelay(t *testing.T) {
	t.Parallel()
	cs, _, _, _, err := tryConnect(t, 10*time.Second, nil, "-list-delay", "150ms")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("tools/list answered after %v, want >= 150ms", d)
	}
}

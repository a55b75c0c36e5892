package testserver

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// rawProc is an mcptestserver spoken to line by line, below go-sdk.
type rawProc struct {
	t     *testing.T
	stdin io.WriteCloser
	lines chan string
}

func startRaw(t *testing.T, args ...string) *rawProc {
	t.Helper()
	cmd := Command(t, args...)
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
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	p := &rawProc{t: t, stdin: stdin, lines: make(chan string, 100)}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	return p
}

func (p *rawProc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// next returns the next stdout line, or "" if none arrives within d.
func (p *rawProc) next(d time.Duration) string {
	select {
	case l := <-p.lines:
		return l
	case <-time.After(d):
		return ""
	}
}

const (
	rawDiscover    = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	rawInitialize  = `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	rawInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`
	rawEcho        = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
)

func idOf(t *testing.T, line string) string {
	t.Helper()
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal([]byte(line), &msg); err != nil {
		t.Fatalf("not JSON: %q", line)
	}
	return string(msg.ID)
}

func TestRawPollute(t *testing.T) {
	t.Parallel()
	p := startRaw(t, "-pollute")
	if l := p.next(5 * time.Second); l != PolluteBanner {
		t.Fatalf("first line %q, want the banner", l)
	}
	p.send(rawInitialize)
	if l := p.next(5 * time.Second); idOf(t, l) != "2" {
		t.Fatalf("initialize answer %q", l)
	}
	p.send(rawInitialized)
	p.send(rawEcho)
	if l := p.next(5 * time.Second); l != PolluteBanner {
		t.Fatalf("line before tool result %q, want the banner", l)
	}
	if l := p.next(5 * time.Second); idOf(t, l) != "3" || !strings.Contains(l, `"hi"`) {
		t.Fatalf("echo answer %q", l)
	}
}

func TestRawIgnoreDiscover(t *testing.T) {
	t.Parallel()
	p := startRaw(t, "-era", "legacy", "-ignore-discover")
	p.send(rawDiscover)
	if l := p.next(300 * time.Millisecond); l != "" {
		t.Fatalf("server/discover was answered: %q", l)
	}
	p.send(rawInitialize)
	if l := p.next(5 * time.Second); idOf(t, l) != "2" || !strings.Contains(l, LegacyVersion) {
		t.Fatalf("initialize answer %q", l)
	}
}

func TestRawLegacyDiscover(t *testing.T) {
	t.Parallel()
	// Without faults, a legacy go-sdk server rejects server/discover with
	// -32022 and lists its versions, which makes clients fall back.
	p := startRaw(t, "-era", "legacy")
	p.send(rawDiscover)
	l := p.next(5 * time.Second)
	if !strings.Contains(l, `"code":-32022`) || !strings.Contains(l, `"supported":["2025-11-25","2025-06-18","2025-03-26","2024-11-05"]`) {
		t.Fatalf("discover answer %q", l)
	}
	t.Logf("legacy discover answer: %s", l)
}

func TestRawModernDiscover(t *testing.T) {
	t.Parallel()
	p := startRaw(t, "-name", "raw-modern")
	p.send(rawDiscover)
	l := p.next(5 * time.Second)
	if !strings.Contains(l, `"supportedVersions":["2026-07-28","2025-11-25"`) || !strings.Contains(l, "raw-modern") {
		t.Fatalf("discover answer %q", l)
	}
	t.Logf("modern discover answer: %s", l)
}

//go:build unix

package stdio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// intID is the integer id n.
func intID(n int64) jsonrpc.ID {
	id, _ := jsonrpc.MakeID(float64(n))
	return id
}

// bigMessage is a request larger than a pipe holds (64 KiB on Linux).
func bigMessage() *jsonrpc.Request {
	return &jsonrpc.Request{ID: intID(1), Method: "tools/call",
		Params: []byte(`{"name":"echo","arguments":{"text":"` + strings.Repeat("a", 256<<10) + `"}}`)}
}

// A write to a server that does not read its stdin ends with its
// context's deadline; having cut its line, it ends the connection: Read
// fails with a *CutOffError, the process is stopped, later writes fail at
// once.
func TestStdioWriteDeadlineCutsOff(t *testing.T) {
	c := shConn(t, `exec sleep 30`) // never reads stdin
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	start := time.Now()
	err := c.Write(ctx, bigMessage())
	if d := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || d > 5*time.Second {
		t.Fatalf("Write: %v after %v, want DeadlineExceeded at its deadline", err, d)
	}
	_, err = c.Read(t.Context())
	var co *CutOffError
	if !errors.As(err, &co) || co.Written == 0 || co.Written >= co.Size || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Read: %v, want a *CutOffError wrapping DeadlineExceeded", err)
	}
	if !c.proc.exitedNow() {
		t.Error("the server is still running")
	}
	var we *WriteError
	if err := c.Write(t.Context(), &jsonrpc.Request{Method: "notifications/initialized"}); !errors.As(err, &we) || !errors.As(err, &co) {
		t.Errorf("a write after the cut: %v, want a *WriteError saying the connection was cut off", err)
	}
	if c.ExitedAlone() {
		t.Error("ExitedAlone, want false: the client stopped it")
	}
}

// A write that waits for its turn behind a write blocked on a full pipe
// gives up at its deadline without harm; Close ends the blocked write and
// the process, whatever its pipes do.
func TestStdioWriteWaitsItsTurnAndCloseEndsIt(t *testing.T) {
	c := shConn(t, `trap '' TERM; exec sleep 30`)
	c.grace = 50 * time.Millisecond
	blocked := make(chan error, 1)
	go func() { blocked <- c.Write(context.Background(), bigMessage()) }()
	for deadline := time.Now().Add(10 * time.Second); len(c.writing) == 0; { // it has its turn
		if time.Now().After(deadline) {
			t.Fatal("the first write did not start")
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // and fills the pipe
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	err := c.Write(ctx, &jsonrpc.Request{ID: intID(2), Method: "ping"})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "waiting to write") {
		t.Fatalf("second write: %v, want DeadlineExceeded while waiting", err)
	}
	select {
	case err := <-blocked:
		t.Fatalf("the first write returned: %v", err)
	default:
	}
	start := time.Now()
	_ = c.Close()
	t.Logf("Close took %v", time.Since(start))
	select {
	case err := <-blocked:
		if err == nil {
			t.Error("the blocked write succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the blocked write")
	}
	if !c.proc.exitedNow() {
		t.Error("the server is still running")
	}
}

// pingLines returns a script that writes n ping requests and then sleeps
// without reading stdin.
func pingLines(n int) string {
	return fmt.Sprintf(`i=0; while [ $i -lt %d ]; do echo "{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"ping\"}"; i=$((i+1)); done; exec sleep 30`, n)
}

// The connection holds at most MaxHeldRequests requests from the server
// that are not answered yet; answering lets more in; one more ends the
// connection with an *OverloadError.
func TestStdioHeldRequestsBound(t *testing.T) {
	c := shConn(t, pingLines(MaxHeldRequests+100))
	c.grace = 50 * time.Millisecond
	read := func(n int) {
		t.Helper()
		for i := range n {
			if _, err := c.Read(t.Context()); err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
		}
	}
	read(MaxHeldRequests)
	for i := range 10 {
		if err := c.Write(t.Context(), &jsonrpc.Response{ID: intID(int64(i)), Result: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	read(10)
	_, err := c.Read(t.Context())
	var oe *OverloadError
	if !errors.As(err, &oe) || oe.Limit != MaxHeldRequests {
		t.Fatalf("one more: %v, want an *OverloadError", err)
	}
	if !c.proc.exitedNow() {
		t.Error("the server is still running")
	}
}

// Responses that cannot be decoded fail their calls with the reason when
// their id can be read, whether it comes first or last; requests that
// cannot be decoded, and lines without a readable id, are stray lines.
func TestStdioUndecodableResponses(t *testing.T) {
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"result":{"x":NaN}}`,
		`{"jsonrpc":"2.0","result":{"x":NaN},"id":"two"}`,
		`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"cut`,
		`{"jsonrpc":"2.0","id":4,"result":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`,
		`{"jsonrpc":"1.0","id":5,"result":{}}`,
		`{"jsonrpc":"2.0","id":6,"method":"ping","params":{"x":NaN}}`,
		`{"jsonrpc":"2.0","result":{"method":"GET","x":NaN},"id":7}`,
		`{"jsonrpc":"2.0","result":{"x":NaN}}`,
		`{"jsonrpc":"2.0","id":8,"result":{}}`,
	}
	var script strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&script, "printf '%%s\\n' '%s'\n", l)
	}
	script.WriteString("exec sleep 30")
	var mu sync.Mutex
	var skips []Skip
	c := shConn(t, script.String())
	c.skipped = newSkipLog(func(s Skip) {
		mu.Lock()
		defer mu.Unlock()
		skips = append(skips, s)
	})
	want := []struct {
		id  any
		msg string
	}{
		{int64(1), "invalid character 'N'"},
		{"two", "invalid character 'N'"},
		{int64(3), "ends before its JSON is complete"},
		{int64(4), "nests deeper than 1000 levels (5001)"},
		{int64(5), "not a valid JSON-RPC message"},
		{int64(8), ""},
	}
	for _, w := range want {
		msg, err := c.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		resp, ok := msg.(*jsonrpc.Response)
		id, _ := jsonrpc.MakeID(w.id)
		if n, isInt := w.id.(int64); isInt {
			id = intID(n)
		}
		if !ok || resp.ID != id {
			t.Fatalf("got %#v, want the response to %v", msg, w.id)
		}
		switch {
		case w.msg == "" && resp.Error != nil:
			t.Errorf("%v: %v, want the result", w.id, resp.Error)
		case w.msg != "" && (resp.Error == nil || !strings.Contains(resp.Error.Error(), w.msg) || !strings.Contains(resp.Error.Error(), "could not be decoded")):
			t.Errorf("%v: %v, want an error saying %q", w.id, resp.Error, w.msg)
		}
	}
	stray := c.StrayLines()
	if len(stray) != 3 || !strings.Contains(stray[0], `"method":"ping"`) || !strings.Contains(stray[1], `"id":7`) {
		t.Errorf("stray lines %q, want the request, the ambiguous line and the one without an id", stray)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(skips) != 8 || skips[0].Err == nil || skips[5].Err != nil {
		t.Errorf("%d skips reported (%+v), want 8: five undecodable responses, three stray lines", len(skips), skips)
	}
}

// Skipped lines are reported one by one up to a burst per interval, then
// counted in one summary at the end of the interval (or at flush).
func TestSkipLogRateLimits(t *testing.T) {
	var mu sync.Mutex
	var got []Skip
	l := newSkipLog(func(s Skip) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, s)
	})
	l.interval = 100 * time.Millisecond
	for i := range 25 {
		l.add(Skip{Line: fmt.Sprint("line ", i)})
	}
	snapshot := func() []Skip {
		mu.Lock()
		defer mu.Unlock()
		return append([]Skip(nil), got...)
	}
	if n := len(snapshot()); n != skipBurst {
		t.Fatalf("%d reported at once, want %d", n, skipBurst)
	}
	// The interval ends: one summary.
	deadline := time.Now().Add(5 * time.Second)
	for len(snapshot()) == skipBurst && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	s := snapshot()
	if len(s) != skipBurst+1 || s[skipBurst].Suppressed != 25-skipBurst || s[skipBurst].Line != "line 24" {
		t.Fatalf("after the interval: %+v, want one summary of %d ending with line 24", s[skipBurst:], 25-skipBurst)
	}
	// A new interval reports one by one again; flush sums up the rest.
	time.Sleep(l.interval)
	for i := range skipBurst + 3 {
		l.add(Skip{Line: fmt.Sprint("again ", i)})
	}
	l.flush()
	l.flush()
	s = snapshot()
	if len(s) != 2*skipBurst+2 || s[len(s)-1].Suppressed != 3 {
		t.Fatalf("second interval: %+v, want %d lines and a summary of 3", s[skipBurst+1:], skipBurst)
	}
	var none *skipLog
	none.add(Skip{})
	none.flush()
}

// A line cut off by its write's deadline is the last thing the server
// gets: the server reads slowly (the pipe has room again soon after the
// cut), and a write that follows at once fails with the *CutOffError and
// sends nothing, rather than appending its message to the half line.
func TestStdioNothingFollowsACutLine(t *testing.T) {
	got := t.TempDir() + "/stdin"
	c := shConn(t, `while :; do dd bs=2048 count=1 status=none || exit; sleep 0.002; done > '`+got+`'`)
	msg := &jsonrpc.Request{ID: intID(1), Method: "tools/call",
		Params: []byte(`{"name":"echo","arguments":{"text":"` + strings.Repeat("a", 1<<20) + `"}}`)}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if err := c.Write(ctx, msg); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Write: %v, want DeadlineExceeded", err)
	}
	var co *CutOffError
	err := c.Write(t.Context(), &jsonrpc.Request{Method: "notifications/initialized"})
	if !errors.As(err, &co) {
		t.Errorf("a write just after the cut: %v, want a *WriteError saying the connection was cut off", err)
	}
	_ = c.Close()
	if err := c.ReadError(); !errors.As(err, &co) {
		t.Fatalf("ReadError: %v, want a *CutOffError", err)
	}
	data, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("notifications/initialized")) {
		t.Errorf("the server got a message after the cut line (%d bytes of %d written): %q", co.Written, co.Size, data[max(0, len(data)-200):])
	}
	t.Logf("cut after %d of %d bytes; the server read %d", co.Written, co.Size, len(data))
}

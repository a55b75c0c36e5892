//go:build unix

package stdio_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A go-sdk client whose call ends while its request is being written, in
// the middle, on a server that reads its stdin slowly: go-sdk then writes its
// notifications/cancelled, which fails, and the server (behind tee, which
// keeps what it reads) gets nothing after the half line: whole lines, then
// the cut one, last.
func TestTransportSDKCancelAfterCutLine(t *testing.T) {
	ctx := testCtx(t)
	got := t.TempDir() + "/stdin"
	tr := &stdio.Transport{Path: "/bin/sh", Args: []string{"-c",
		`while :; do dd bs=2048 count=1 status=none || exit; sleep 0.002; done | tee '` + got + `' | exec '` + testserver.Build(t) + `'`}}
	var conn *stdio.Conn
	tr.OnStart = func(c *stdio.Conn) { conn = c }
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "v0.0.1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	// The call ends once the server has read part of its request.
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopped := make(chan struct{})
	go func() {
		defer cancel()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if fi, err := os.Stat(got); err == nil && fi.Size() > 64<<10 {
				return
			}
			select {
			case <-stopped:
				return
			default:
			}
		}
	}()
	_, err = cs.CallTool(callCtx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": strings.Repeat("c", 2<<20)}})
	close(stopped)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("echo: %v, want Canceled", err)
	}
	var co *stdio.CutOffError
	if err := conn.ReadError(); !errors.As(err, &co) {
		t.Fatalf("ReadError: %v, want a *CutOffError", err)
	}
	time.Sleep(100 * time.Millisecond) // go-sdk's notifications/cancelled, written in the background
	_ = cs.Wait()                      // the connection ends: go-sdk's reading stops
	_ = cs.Close()
	data, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(data, []byte("\n"))
	for i, l := range lines[:len(lines)-1] {
		if !json.Valid(l) {
			t.Errorf("line %d of %d (%d bytes) is not a JSON message: %.80q…", i+1, len(lines), len(l), l)
		}
	}
	if bytes.Contains(data, []byte("notifications/cancelled")) {
		t.Errorf("the server got go-sdk's notifications/cancelled after the cut line: %q", data[max(0, len(data)-200):])
	}
	t.Logf("cut after %d of %d bytes; the server read %d bytes, %d of them after the last newline", co.Written, co.Size, len(data), len(lines[len(lines)-1]))
}

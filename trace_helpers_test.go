package mcpadapter_test

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// tracedServer returns the target of the trace tests' echo server over
// transport: "stdio" (a go-sdk server over stdio), "in-process" or
// "streamable" (a handshake-era go-sdk server over streamable HTTP).
func tracedServer(t *testing.T, transport string) any {
	t.Helper()
	switch transport {
	case "stdio":
		return stdioServer(t)
	case "in-process":
		return testserver.New(testserver.Options{})
	case "streamable":
		return testserver.ServeStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	}
	t.Fatalf("no traced server over %q", transport)
	return nil
}

// tracedClient returns a client of the echo server over transport
// (tracedServer) with Trace on, whose logger writes JSON at level debug
// into the returned buffer; the client is closed when the test ends.
func tracedClient(t *testing.T, transport string) (*mcpadapter.Client, *syncBuffer) {
	t.Helper()
	logs := new(syncBuffer)
	c, err := mcpadapter.NewClient(tracedServer(t, transport), &mcpadapter.ClientOptions{Name: "traced", Trace: true,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, logs
}

// testTracedEchoes runs, over each of transports, a traced client
// (tracedClient) that echoes each of forms, JSON string contents each
// holding a secret marked S3CR: each echo returns its secret, and the
// trace holds each of kept and at least minRedacted "[REDACTED]" and
// shows no secret (noSecretLines).
func testTracedEchoes(t *testing.T, transports, forms, kept []string, minRedacted int) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			ctx := testCtx(t)
			c, logs := tracedClient(t, transport)
			for _, form := range forms {
				res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"`+form+`"}`), nil)
				if err != nil || !strings.Contains(res.Text(), "S3CR") {
					t.Fatalf("echo %s: %v %v", form, err, res)
				}
			}
			out := logs.String()
			for _, k := range kept {
				if !strings.Contains(out, k) {
					t.Errorf("the trace lacks %q", k)
				}
			}
			if n := strings.Count(out, "[REDACTED]"); n < minRedacted {
				t.Errorf("the trace lacks the exchange (%d bytes, %d redactions, want %d)", len(out), n, minRedacted)
			}
			noSecretLines(t, "the trace", out)
		})
	}
}

// noSecretLines fails t for each line of out, a log (what names it),
// that shows the secret marker S3CR, quoting the line around it.
func noSecretLines(t *testing.T, what, out string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if i := strings.Index(line, "S3CR"); i >= 0 {
			t.Errorf("%s shows a secret: …%s…", what, line[max(0, i-120):min(len(line), i+20)])
		}
	}
}

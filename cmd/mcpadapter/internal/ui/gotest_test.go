package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/demo"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/session"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/ui"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestExportedGoTest saves a call in the inspector, exports the saved
// calls as a Go test, and runs it with go test against the same server:
// it passes; with the expected text changed, it fails.
func TestExportedGoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a Go test")
	}
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return demo.Weather() }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer hs.Close()
	rec := ui.NewRecorder()
	// As the ui command opens a URL: one adapter, its tools unprefixed.
	c, err := mcpadapter.NewClient(hs.URL+"/mcp", &mcpadapter.ClientOptions{Name: "weather", Trace: true, Logger: rec.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	ad, err := mcpadapter.New(c, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
	if err != nil {
		t.Fatal(err)
	}
	s := session.Single(ad, "weather")
	defer s.Close()
	in := &inspector{}
	srv := startUI(t, s, rec, &ui.Target{URL: hs.URL + "/mcp"})
	*in = *inspectorOf(t, srv)
	in.login(t)

	// The page's calls: forecast for Paris, then save it.
	resp, body := in.request(t, "POST", "/api/call", in.origin(), `{"server":"weather","tool":"forecast","args":{"city":"Paris","days":2}}`)
	if resp.StatusCode != 200 {
		t.Fatalf("call: %d %s", resp.StatusCode, body)
	}
	var started struct{ ID string }
	_ = json.Unmarshal([]byte(body), &started)
	// Wait for the call's end as the page does: the events' long poll.
	var seq int64
	for i := 0; !strings.Contains(in.calls(t), `"status":"done"`); i++ {
		if i == 100 {
			t.Fatalf("the call did not end: %s", in.calls(t))
		}
		_, body := in.request(t, "GET", fmt.Sprintf("/api/events?after=%d", seq), nil, "")
		var ev struct{ Events []ui.Event }
		_ = json.Unmarshal([]byte(body), &ev)
		for _, e := range ev.Events {
			seq = e.Seq
		}
	}
	if resp, body := in.request(t, "POST", "/api/saved", in.origin(), `{"callId":"`+started.ID+`","name":"forecast for Paris"}`); resp.StatusCode != 200 {
		t.Fatalf("save: %d %s", resp.StatusCode, body)
	}
	_, src := in.request(t, "GET", "/api/saved/export.go", nil, "")

	var root string
	root, err = filepath.Abs("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	run := func(src string) (string, error) {
		dir := t.TempDir()
		goMod := "module savedcalls\n\ngo 1.25.0\n\nrequire github.com/mcpadapter/mcpadapter v0.0.0-00010101000000-000000000000\n\nreplace github.com/mcpadapter/mcpadapter => " + root + "\n"
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(goMod), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "saved_calls_test.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off")
		cmd := exec.CommandContext(ctx, "go", "test", "-count=1", ".")
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(src); err != nil {
		t.Fatalf("the exported test fails against the same server: %v\n%s\n%s", err, out, src)
	}
	changed := strings.Replace(src, `Paris: day 1`, `Paris: day 9`, 1)
	if changed == src {
		t.Fatalf("the exported test does not hold the expected text:\n%s", src)
	}
	if out, err := run(changed); err == nil || !strings.Contains(out, "text:") {
		t.Errorf("the exported test with another expected text: %v\n%s", err, out)
	}
}

// inspectorOf is newInspector for a server already started.
func inspectorOf(t *testing.T, srv *ui.Server) *inspector {
	t.Helper()
	u := srv.URL()
	i := strings.Index(u, "/?token=")
	base := u[:i]
	return &inspector{srv: srv, base: base, port: base[strings.LastIndex(base, ":")+1:], token: u[i+len("/?token="):]}
}

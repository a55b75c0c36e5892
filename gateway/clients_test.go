package gateway

import (
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestTypeScriptClient: the TypeScript SDK's client (npm
// @modelcontextprotocol/sdk, under Node 22) lists, calls, gets progress,
// answers an elicitation of a handshake-era server and reads an unknown
// tool's error, through the gateway.
func TestTypeScriptClient(t *testing.T) {
	node := testenv.Node(t)
	sdk := filepath.Join(testenv.NPMDir(t), "node_modules", "@modelcontextprotocol", "sdk")
	for _, era := range []testserver.Era{testserver.Legacy, testserver.Modern} {
		t.Run(era.String(), func(t *testing.T) {
			srv := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: era}), func(o *mcp.StreamableHTTPOptions) { o.Stateless = era == testserver.Modern })
			_, url := startGateway(t, []Server{{Name: "s", Target: srv.URL}}, &Options{Prefix: mcpadapter.PrefixNever})
			cmd := exec.CommandContext(testCtx(t, 60*time.Second), node, "testdata/tsclient.mjs", sdk, url)
			cmd.Env = testenv.NodeEnv(node)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("tsclient: %v\n%s", err, stderr.String())
			}
			var got struct {
				Version        string
				Tools          []string
				Echo           string
				ProgressResult string
				Progress       []float64
				Book           string
				Asked          []string
				Unknown        string
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("tsclient printed %q: %v", out, err)
			}
			if got.Version != "2025-11-25" || !contains(got.Tools, "echo") || got.Echo != "from ts" {
				t.Errorf("version, tools, echo: %+v", got)
			}
			if got.ProgressResult != "done" || len(got.Progress) != 3 {
				t.Errorf("progress: %+v", got)
			}
			if got.Book != "Booked 4 guests (inside) on monday" || len(got.Asked) != 1 {
				t.Errorf("elicitation: %+v", got)
			}
			if !strings.Contains(got.Unknown, `unknown tool "nope"`) || !strings.Contains(got.Unknown, "echo") {
				t.Errorf("unknown tool: %q", got.Unknown)
			}
		})
	}
}

// TestAdapterClient: mcpadapter's own client sees the gateway as any
// server, at both versions: tools, a call, prompts.
func TestAdapterClient(t *testing.T) {
	_, url := startGateway(t, FromConfig(twoServers(t, "")), nil)
	for _, v := range []string{"", v1125} {
		c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{Name: "gw", ProtocolVersion: v, Logger: quietLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		ctx := testCtx(t, 30*time.Second)
		info, err := c.Connect(ctx)
		if err != nil {
			t.Fatalf("connect %q: %v", v, err)
		}
		if want := mcpadapter.EraDiscover; v == "" && info.Era != want {
			t.Errorf("era %v, want %v", info.Era, want)
		}
		tools, err := c.Tools(ctx)
		if err != nil || len(tools) < 5 {
			t.Fatalf("tools: %d, %v", len(tools), err)
		}
		res, err := c.CallTool(ctx, "beta_echo", json.RawMessage(`{"text":"adapter"}`), nil)
		if err != nil || res.Text() != "adapter" {
			t.Fatalf("call: %v, %v", res, err)
		}
		prompts, err := c.ListPrompts(ctx)
		if err != nil || len(prompts) != 1 {
			t.Fatalf("prompts: %v, %v", prompts, err)
		}
		_ = c.Close()
	}
}

// TestServeStdio: a client on the gateway's stdin and stdout.
func TestServeStdio(t *testing.T) {
	g, err := New([]Server{{Name: "s", Target: testserver.New(testserver.Options{Era: testserver.Legacy})}}, &Options{Logger: quietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ctx := testCtx(t, 30*time.Second)
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	cr, gw := io.Pipe()
	gr, cw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- g.ServeStdio(ctx, gr, gw) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "stdio-client"}, nil)
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "over stdio"}})
	if err != nil || texts(res) != "over stdio" {
		t.Fatalf("call: %q, %v", texts(res), err)
	}
	_ = cs.Close()
	_ = cw.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return after the client closed")
	}
}

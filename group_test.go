package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// parseConfig parses a config document whose ${VAR}s come from vars.
func parseConfig(t *testing.T, doc string, vars map[string]string) *mcpadapter.Config {
	t.Helper()
	cfg, err := mcpadapter.ParseConfigEnv([]byte(doc), func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestGroupThreeTransports(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	httpSrv, httpState := testserver.NewWithState(testserver.Options{Name: "http-server"})
	httpURL := testserver.ServeStreamable(t, httpSrv, testserver.Stateless())
	sse := testserver.StartSSE(t, testserver.New(testserver.Options{Name: "sse-server"}))
	cfg := parseConfig(t, `{"mcpServers": {
		"local":  {"command": "${BIN}", "args": ["-name", "stdio-server"]},
		"remote": {"url": "${HTTP_URL}", "headers": {"X-Team": "remote-team"}, "auth": "${TOKEN}"},
		"legacy": {"url": "${SSE_URL}", "transport": "sse", "headers": {"X-Team": "legacy-team"}}
	}}`, map[string]string{"BIN": testserver.Build(t), "HTTP_URL": httpURL, "SSE_URL": sse.URL, "TOKEN": "remote-token"})

	a, err := mcpadapter.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools := toolMap(t, ctx, a)
	for _, name := range []string{"local_echo", "remote_echo", "legacy_echo", "remote_headers"} {
		if tools[name] == nil {
			t.Fatalf("no tool %q", name)
		}
	}
	if tl := tools["remote_echo"]; tl.OriginalName != "echo" || tl.Server != "remote" {
		t.Errorf("remote_echo: original %q server %q", tl.OriginalName, tl.Server)
	}
	if tools["echo"] != nil {
		t.Error("unprefixed name with three servers")
	}

	// Each call reaches its own server.
	var wg sync.WaitGroup
	for _, server := range []string{"local", "remote", "legacy"} {
		wg.Go(func() {
			res, err := tools[server+"_echo"].Call(ctx, json.RawMessage(fmt.Sprintf(`{"text":%q}`, server)))
			if err != nil || res.Text() != server {
				t.Errorf("%s_echo: %v %+v", server, err, res)
			}
		})
	}
	wg.Wait()
	info, err := a.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	impl := map[string]string{}
	for _, s := range info.Servers {
		impl[s.Name] = s.Implementation.Name + "/" + s.Transport
	}
	if impl["local"] != "stdio-server/stdio" || impl["remote"] != "http-server/streamable-http" || impl["legacy"] != "sse-server/sse" {
		t.Errorf("servers: %v", impl)
	}

	// Each server gets its own headers and auth, and no other's.
	if _, err := tools["remote_headers"].Call(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if h := httpState.LastHeaders("headers"); h.Get("X-Team") != "remote-team" || h.Get("Authorization") != "Bearer remote-token" {
		t.Errorf("remote server saw %v", h)
	}
	for _, r := range sse.Requests() {
		if r.Header.Get("X-Team") != "legacy-team" || r.Header.Get("Authorization") != "" {
			t.Errorf("SSE server saw %s with headers %v", r.Method, r.Header)
		}
	}
}

func TestGroupEraRule(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	bin := testserver.Build(t)
	modernURL := testserver.ServeStreamable(t, testserver.New(testserver.Options{Name: "modern-http"}), testserver.Stateless())
	vars := map[string]string{"BIN": bin, "URL": modernURL}

	modern := parseConfig(t, `{"mcpServers": {
		"a": {"command": "${BIN}"},
		"b": {"url": "${URL}"}
	}}`, vars)
	mixed := parseConfig(t, `{"mcpServers": {
		"a": {"command": "${BIN}"},
		"b": {"url": "${URL}"},
		"old": {"command": "${BIN}", "args": ["-era", "legacy"]}
	}}`, vars)

	am, err := mcpadapter.New(modern, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer am.Close()
	ax, err := mcpadapter.New(mixed, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ax.Close()
	alone, err := mcpadapter.New(modernURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close()

	// All three adapters discover and call at the same time.
	var wg sync.WaitGroup
	var infos [3]*mcpadapter.Info
	for i, a := range []*mcpadapter.Adapter{am, ax, alone} {
		wg.Go(func() {
			tools, err := a.Tools(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			for _, tl := range tools {
				if tl.OriginalName != "echo" {
					continue
				}
				if res, err := tl.Call(ctx, json.RawMessage(`{"text":"hi"}`)); err != nil || res.Text() != "hi" {
					t.Errorf("%s: %v %+v", tl.Name, err, res)
				}
			}
			infos[i], err = a.Info(ctx)
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if infos[0].Era != mcpadapter.EraDiscover || infos[0].PulledDownBy != "" {
		t.Errorf("two modern servers: era %v, pulled down by %q", infos[0].Era, infos[0].PulledDownBy)
	}
	for _, s := range infos[0].Servers {
		if s.ProtocolVersion != "2026-07-28" {
			t.Errorf("modern group: %s speaks %s", s.Name, s.ProtocolVersion)
		}
	}
	if infos[1].Era != mcpadapter.EraHandshake || infos[1].PulledDownBy != "old" {
		t.Errorf("mixed group: era %v, pulled down by %q", infos[1].Era, infos[1].PulledDownBy)
	}
	for _, s := range infos[1].Servers {
		if s.Era != mcpadapter.EraHandshake || s.ProtocolVersion != "2025-11-25" {
			t.Errorf("mixed group: %s speaks %s (%v)", s.Name, s.ProtocolVersion, s.Era)
		}
	}
	if infos[2].Era != mcpadapter.EraDiscover || infos[2].Servers[0].ProtocolVersion != "2026-07-28" {
		t.Errorf("separate adapter: %v %s", infos[2].Era, infos[2].Servers[0].ProtocolVersion)
	}
}

func TestGroupBriefExample(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	wSrv, wState := testserver.NewWithState(testserver.Options{Name: "weather"})
	cSrv, cState := testserver.NewWithState(testserver.Options{Name: "calendar"})
	doc := `{
		"mcpServers": {
			"weather": {"url": "https://weather.example.com/mcp"},
			"calendar": {
				"url": "https://calendar.example.com/mcp",
				"headers": {"Authorization": "Bearer cal-token"}
			}
		}
	}`
	// The brief's document, verbatim, then pointed at loopback servers.
	cfg, err := mcpadapter.ParseConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Servers) != 2 || cfg.Servers[0].Name != "weather" || cfg.Servers[1].Headers["Authorization"] != "Bearer cal-token" {
		t.Fatalf("parsed %+v", cfg.Servers)
	}
	cfg.Servers[0].URL = testserver.ServeStreamable(t, wSrv, testserver.Stateless())
	cfg.Servers[1].URL = testserver.ServeStreamable(t, cSrv, testserver.Stateless())
	a, err := mcpadapter.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools := toolMap(t, ctx, a)
	for _, name := range []string{"weather_headers", "calendar_headers"} {
		if _, err := tools[name].Call(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	if h := cState.LastHeaders("headers"); h.Get("Authorization") != "Bearer cal-token" {
		t.Errorf("calendar saw %v", h)
	}
	if h := wState.LastHeaders("headers"); h.Get("Authorization") != "" {
		t.Errorf("weather saw the calendar's token: %v", h)
	}
}

func TestGroupCollision(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	server := func(tool string) *mcp.Server {
		srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
		srv.AddTool(&mcp.Tool{Name: tool, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
		return srv
	}
	p, _ := mcpadapter.NewClient(server("q_echo"), &mcpadapter.ClientOptions{Name: "p"})
	pq, _ := mcpadapter.NewClient(server("echo"), &mcpadapter.ClientOptions{Name: "p_q"})
	g, err := mcpadapter.GroupOf(p, pq)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := mcpadapter.New(g, nil)
	defer a.Close()
	_, err = a.Tools(ctx)
	var ce *mcpadapter.NameCollisionError
	if !errors.As(err, &ce) || ce.Name != "p_q_echo" || !strings.Contains(err.Error(), "p/q_echo") || !strings.Contains(err.Error(), "p_q/echo") {
		t.Fatalf("got %v, want a collision naming p/q_echo and p_q/echo", err)
	}
	// Filtering one of them out resolves it.
	a2, _ := mcpadapter.New(g, &mcpadapter.Options{ToolFilter: func(server string, _ *mcpadapter.Tool) bool { return server != "p" }})
	if tools, err := a2.Tools(ctx); err != nil || len(tools) != 1 || tools[0].Name != "p_q_echo" {
		t.Errorf("filtered: %v %v", tools, err)
	}

	if _, err := mcpadapter.GroupOf(p, p); err == nil || !strings.Contains(err.Error(), `"p"`) {
		t.Errorf("two clients named p: %v", err)
	}
	bad, _ := mcpadapter.NewClient(server("x"), &mcpadapter.ClientOptions{Name: "has space"})
	if _, err := mcpadapter.GroupOf(p, bad); err == nil || !strings.Contains(err.Error(), "has space") {
		t.Errorf("a server name with a space: %v", err)
	}
}

func TestGroupFilters(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	cfg := parseConfig(t, `{"mcpServers": {
		"a": {"command": "${BIN}", "includeTools": ["echo", "add"]},
		"b": {"command": "${BIN}", "excludeTools": ["crash", "slow"]}
	}}`, map[string]string{"BIN": testserver.Build(t)})
	a, err := mcpadapter.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools := toolMap(t, ctx, a)
	if len(tools) == 0 || tools["a_echo"] == nil || tools["a_add"] == nil || tools["a_fail"] != nil {
		t.Errorf("includeTools: %v", keys(tools))
	}
	if tools["b_echo"] == nil || tools["b_crash"] != nil || tools["b_slow"] != nil {
		t.Errorf("excludeTools: %v", keys(tools))
	}
}

func keys[M ~map[string]V, V any](m M) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestGroupPartialFailure(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	dir := t.TempDir()
	late := filepath.Join(dir, "late-server")
	cfg := parseConfig(t, `{"mcpServers": {
		"up": {"command": "${BIN}"},
		"late": {"command": "${LATE}"},
		"nowhere": {"url": "http://127.0.0.1:1/mcp"}
	}}`, map[string]string{"BIN": testserver.Build(t), "LATE": late})

	// By default every failed server is listed, not just the first.
	strict, err := mcpadapter.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer strict.Close()
	_, err = strict.Tools(ctx)
	var ge *mcpadapter.GroupError
	if !errors.As(err, &ge) || len(ge.Failures) != 2 || !strings.Contains(err.Error(), "late") || !strings.Contains(err.Error(), "nowhere") {
		t.Fatalf("got %v, want a GroupError listing late and nowhere", err)
	}

	// With SkipUnavailable the agent keeps the servers that work.
	var reported []string
	lenient, err := mcpadapter.New(cfg, &mcpadapter.Options{SkipUnavailable: true, OnUnavailable: func(f mcpadapter.ServerFailure) {
		reported = append(reported, f.Server)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer lenient.Close()
	tools := toolMap(t, ctx, lenient)
	if tools["up_echo"] == nil || tools["late_echo"] != nil || len(reported) != 2 {
		t.Fatalf("lenient: tools %v, reported %v", keys(tools), reported)
	}
	info, err := lenient.Info(ctx)
	if err != nil || len(info.Unavailable) != 2 || len(info.Servers) != 1 {
		t.Errorf("info: %+v %v", info, err)
	}

	// The late server comes up: the next listing uses it.
	if err := os.Symlink(testserver.Build(t), late); err != nil {
		t.Fatal(err)
	}
	tools = toolMap(t, ctx, lenient)
	if tools["late_echo"] == nil {
		t.Fatalf("late server not used once up: %v", keys(tools))
	}
	if res, err := tools["late_echo"].Call(ctx, json.RawMessage(`{"text":"late"}`)); err != nil || res.Text() != "late" {
		t.Errorf("late_echo: %v %+v", err, res)
	}
}

// BenchmarkGroupDiscovery lists the tools of 1 and of 8 stdio servers that
// each take 100 ms to answer tools/list. Fan-out makes 8 cost about as much
// as 1; README reports t(8)/t(1).
func BenchmarkGroupDiscovery(b *testing.B) {
	bin := testserver.Build(b)
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			var doc strings.Builder
			doc.WriteString(`{"mcpServers":{`)
			for i := range n {
				if i > 0 {
					doc.WriteString(",")
				}
				fmt.Fprintf(&doc, `"s%d":{"command":%q,"args":["-minimal","-list-delay","100ms"]}`, i, bin)
			}
			doc.WriteString("}}")
			cfg, err := mcpadapter.ParseConfig([]byte(doc.String()))
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			for b.Loop() {
				a, err := mcpadapter.New(cfg, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := a.Tools(ctx); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				a.Close()
				b.StartTimer()
			}
		})
	}
}

func TestNewGroupRejectsBadCache(t *testing.T) {
	t.Parallel()
	cfg, err := mcpadapter.ParseConfig([]byte(`{"mcpServers": {"a": {"url": "https://a.example.com/mcp"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = mcpadapter.NewGroup(cfg, &mcpadapter.ClientOptions{Cache: &mcpadapter.CacheConfig{MaxTTL: -time.Second}})
	if err == nil || !strings.Contains(err.Error(), "ClientOptions.Cache: CacheConfig.MaxTTL is negative") {
		t.Errorf("err = %v", err)
	}
}

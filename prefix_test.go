package mcpadapter_test

import (
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// namedClient is a client of an in-process test server named name.
func namedClient(t *testing.T, name string) *mcpadapter.Client {
	t.Helper()
	c, err := mcpadapter.NewClient(testserver.New(testserver.Options{}), &mcpadapter.ClientOptions{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// toolNames lists the names an adapter gives its tools, sorted.
func toolNames(t *testing.T, target any, opts *mcpadapter.Options) ([]string, error) {
	t.Helper()
	a, err := mcpadapter.New(target, opts)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := a.Tools(testCtx(t))
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names, err
}

// TestPrefixStableNames: with PrefixAlways a tool keeps its name when a
// second server is added; with the default it does not.
func TestPrefixStableNames(t *testing.T) {
	math := namedClient(t, "math")
	one, err := toolNames(t, math, &mcpadapter.Options{Prefix: mcpadapter.PrefixAlways})
	if err != nil || !slices.Contains(one, "math_add") || slices.Contains(one, "add") {
		t.Fatalf("one server, PrefixAlways: %v %v", one, err)
	}
	g, err := mcpadapter.GroupOf(math, namedClient(t, "text"))
	if err != nil {
		t.Fatal(err)
	}
	two, err := toolNames(t, g, &mcpadapter.Options{Prefix: mcpadapter.PrefixAlways})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range one {
		if !slices.Contains(two, n) {
			t.Errorf("%s is gone once a second server is added: %v", n, two)
		}
	}
	auto, err := toolNames(t, namedClient(t, "math"), nil)
	if err != nil || !slices.Contains(auto, "add") {
		t.Errorf("one server, PrefixAuto: %v %v", auto, err)
	}
	// PrefixNever: the servers' own names, which collide here.
	g2, err := mcpadapter.GroupOf(namedClient(t, "a"), namedClient(t, "b"))
	if err != nil {
		t.Fatal(err)
	}
	var ce *mcpadapter.NameCollisionError
	if _, err := toolNames(t, g2, &mcpadapter.Options{Prefix: mcpadapter.PrefixNever}); !errors.As(err, &ce) || ce.First != "a/"+ce.Name {
		t.Errorf("two servers, PrefixNever: %v", err)
	}
}

// TestPrefixPerServer: a server's own "prefix" replaces its config key in
// tool names and is always used.
func TestPrefixPerServer(t *testing.T) {
	srv := testserver.New(testserver.Options{})
	url := testserver.ServeStreamable(t, srv, testserver.Stateless())
	vars := map[string]string{"URL": url}
	one, err := toolNames(t, parseConfig(t, `{"mcpServers": {"knowledge-base-v2": {"url": "${URL}", "prefix": "kb"}}}`, vars), nil)
	if err != nil || !slices.Contains(one, "kb_echo") {
		t.Errorf("one server with a prefix: %v %v", one, err)
	}
	two, err := toolNames(t, parseConfig(t, `{"mcpServers": {
		"knowledge-base-v2": {"url": "${URL}", "prefix": "kb"},
		"other": {"url": "${URL}"}}}`, vars), &mcpadapter.Options{Prefix: mcpadapter.PrefixNever, ToolFilter: func(_ string, t *mcpadapter.Tool) bool {
		return t.Server != "other" || t.Name != "echo" // echo would collide
	}})
	if err != nil || !slices.Contains(two, "kb_echo") || !slices.Contains(two, "add") || slices.Contains(two, "knowledge-base-v2_echo") {
		t.Errorf("a prefix with PrefixNever: %v %v", two, err)
	}
	// Options.Transforms gives a prefix from code.
	names, err := toolNames(t, namedClient(t, "math"), &mcpadapter.Options{Transforms: map[string]*mcpadapter.ServerTransform{"math": {Prefix: "calc"}}})
	if err != nil || !slices.Contains(names, "calc_add") {
		t.Errorf("Options.Transforms prefix: %v %v", names, err)
	}
}

// emptyServer is an in-process server with no tools.
func emptyServer() *mcp.Server {
	return mcp.NewServer(&mcp.Implementation{Name: "empty", Version: "1"}, nil)
}

// TestEmptyToolList: a server that lists no tools is a warning naming it,
// or with RequireTools a *NoToolsError, which SkipUnavailable skips.
func TestEmptyToolList(t *testing.T) {
	ctx := testCtx(t)
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	empty, err := mcpadapter.NewClient(emptyServer(), &mcpadapter.ClientOptions{Name: "empty", Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	a, err := mcpadapter.New(empty, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tools, err := a.Tools(ctx); err != nil || len(tools) != 0 {
		t.Fatalf("Tools: %v %v", tools, err)
	}
	if !strings.Contains(logs.String(), `level=WARN msg="server lists no tools: check its URL or command, its credentials and its configuration" server=empty`) {
		t.Errorf("no warning naming the server:\n%s", logs.String())
	}

	strict, err := mcpadapter.New(empty, &mcpadapter.Options{RequireTools: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = strict.Tools(ctx)
	var ne *mcpadapter.NoToolsError
	if !errors.As(err, &ne) || ne.Server != "empty" || ne.Listed != 0 || !strings.Contains(err.Error(), `server "empty" lists no tools`) {
		t.Fatalf("RequireTools: %v", err)
	}

	// In a group: the other servers' tools, and the empty one reported.
	g, err := mcpadapter.GroupOf(empty, namedClient(t, "math"))
	if err != nil {
		t.Fatal(err)
	}
	var skipped []mcpadapter.ServerFailure
	ga, err := mcpadapter.New(g, &mcpadapter.Options{RequireTools: true, SkipUnavailable: true, OnUnavailable: func(f mcpadapter.ServerFailure) { skipped = append(skipped, f) }})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := ga.Tools(ctx)
	if err != nil || len(tools) == 0 || len(skipped) != 1 || skipped[0].Server != "empty" || !errors.As(skipped[0].Err, &ne) {
		t.Errorf("group: %d tools, %v, skipped %v", len(tools), err, skipped)
	}

	// Filters that leave nothing count as no tools too.
	cfg := parseConfig(t, `{"mcpServers": {"math": {"url": "${URL}", "includeTools": ["nope"]}}}`,
		map[string]string{"URL": testserver.ServeStreamable(t, testserver.New(testserver.Options{}), testserver.Stateless())})
	fa, err := mcpadapter.New(cfg, &mcpadapter.Options{RequireTools: true})
	if err != nil {
		t.Fatal(err)
	}
	defer fa.Close()
	if _, err := fa.Tools(ctx); !errors.As(err, &ne) || ne.Listed == 0 || !strings.Contains(err.Error(), "leave none of its") {
		t.Errorf("filtered to nothing: %v", err)
	}
}

package gateway

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// twoServers starts two HTTP test servers (one of each era, the second
// with resources and prompts) and returns a config naming them.
func twoServers(t *testing.T, extra string) *mcpadapter.Config {
	t.Helper()
	a := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "alpha"}), testserver.Stateless())
	b := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "beta", Era: testserver.Legacy, Resources: true}))
	doc := fmt.Sprintf(`{"mcpServers": {
		"alpha": {"url": %q, "includeTools": ["echo", "add", "slow"]},
		"beta": {"url": %q, "excludeTools": ["crash"] %s}
	}}`, a.URL, b.URL, extra)
	cfg, err := mcpadapter.ParseConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestAggregation: the tools of two servers under their prefixes, the
// config's filters applied; prompts prefixed; resources and templates
// under their own URIs; each call, read, prompt and completion reaches its
// server, for clients of both eras.
func TestAggregation(t *testing.T) {
	_, url := startGateway(t, FromConfig(twoServers(t, "")), nil)
	for _, v := range []string{v1125, v0728} {
		t.Run(v, func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			cs := connect(t, url, v, nil)
			names := toolNames(t, cs)
			for _, want := range []string{"alpha_echo", "alpha_add", "alpha_slow", "beta_echo", "beta_book"} {
				if !contains(names, want) {
					t.Errorf("tools/list lacks %s: %v", want, names)
				}
			}
			for _, gone := range []string{"alpha_fail", "beta_crash", "echo"} {
				if contains(names, gone) {
					t.Errorf("tools/list has %s, which filters or prefixes leave out: %v", gone, names)
				}
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "beta_echo", Arguments: map[string]any{"text": "to beta"}})
			if err != nil || texts(res) != "to beta" {
				t.Fatalf("beta_echo: %q, %v", texts(res), err)
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha_add", Arguments: map[string]any{"a": 2, "b": 3}})
			if err != nil || texts(res) != "5" {
				t.Fatalf("alpha_add: %q, %v", texts(res), err)
			}
			if sc, _ := res.StructuredContent.(map[string]any); sc["sum"] != float64(5) {
				t.Errorf("alpha_add structured content: %v", res.StructuredContent)
			}

			prompts, err := cs.ListPrompts(ctx, nil)
			if err != nil || len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "beta_greet" {
				t.Fatalf("prompts/list: %v, %v", prompts, err)
			}
			pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "beta_greet", Arguments: map[string]string{"name": "Ada"}})
			if err != nil || len(pr.Messages) == 0 {
				t.Fatalf("prompts/get: %v, %v", pr, err)
			}
			rl, err := cs.ListResources(ctx, nil)
			if err != nil || len(rl.Resources) != 2 {
				t.Fatalf("resources/list: %v, %v", rl, err)
			}
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: testserver.ResourceA})
			if err != nil || len(rr.Contents) != 1 || rr.Contents[0].URI != testserver.ResourceA {
				t.Fatalf("resources/read: %v, %v", rr, err)
			}
			tl, err := cs.ListResourceTemplates(ctx, nil)
			if err != nil || len(tl.ResourceTemplates) != 1 {
				t.Fatalf("resources/templates/list: %v, %v", tl, err)
			}
			_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://nowhere/x"})
			if err == nil {
				t.Fatal("reading a URI no server offers succeeded")
			}
		})
	}
}

// TestErrorsNameWhatWasWrong: an unknown tool is refused with the known
// ones, arguments that are not an object with their JSON path, for
// clients of both eras.
func TestErrorsNameWhatWasWrong(t *testing.T) {
	_, url := startGateway(t, FromConfig(twoServers(t, "")), nil)
	for _, v := range []string{v1125, v0728} {
		t.Run(v, func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			cs := connect(t, url, v, nil)
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "weather", Arguments: map[string]any{}})
			var we *jsonrpc.Error
			if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, `unknown tool "weather"`) || !strings.Contains(we.Message, "alpha_echo") || !strings.Contains(we.Message, "beta_book") {
				t.Errorf("unknown tool: %v", err)
			}
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha_echo", Arguments: []int{1, 2}})
			if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, "$.arguments must be a JSON object") {
				t.Errorf("arguments that are an array: %v", err)
			}
			_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet"})
			if err == nil || !strings.Contains(err.Error(), `unknown prompt "greet"`) || !strings.Contains(err.Error(), "beta_greet") {
				t.Errorf("unknown prompt: %v", err)
			}
		})
	}
}

// TestCollisionAtStart: two servers that would show one tool name make
// Start fail, naming both; with prefixes they do not collide.
func TestCollisionAtStart(t *testing.T) {
	a := testserver.New(testserver.Options{Name: "a"})
	b := testserver.New(testserver.Options{Name: "b", Era: testserver.Legacy})
	g, err := New([]Server{{Name: "one", Target: a}, {Name: "two", Target: b}}, &Options{Prefix: mcpadapter.PrefixNever, Logger: quietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	err = g.Start(testCtx(t, 30*time.Second))
	var nc *mcpadapter.NameCollisionError
	if !errors.As(err, &nc) || !strings.Contains(err.Error(), "one/echo") || !strings.Contains(err.Error(), "two/echo") {
		t.Fatalf("Start: %v, want a collision naming one/echo and two/echo", err)
	}
	_, url := startGateway(t, []Server{{Name: "one", Target: testserver.New(testserver.Options{})}, {Name: "two", Target: testserver.New(testserver.Options{})}}, nil)
	names := toolNames(t, connect(t, url, v1125, nil))
	if !contains(names, "one_echo") || !contains(names, "two_echo") {
		t.Errorf("prefixed tools: %v", names)
	}
}

// TestCompletionRouted: completion/complete for a prompt reaches the
// prompt's server under its own name.
func TestCompletionRouted(t *testing.T) {
	_, url := startGateway(t, FromConfig(twoServers(t, "")), nil)
	cs := connect(t, url, v1125, nil)
	_, err := cs.Complete(testCtx(t, 10*time.Second), &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "beta_greet"},
		Argument: mcp.CompleteParamsArgument{Name: "name", Value: "A"},
	})
	// The test server has no completion handler: its own refusal comes
	// back, not the gateway's.
	if err != nil && strings.Contains(err.Error(), "unknown prompt") {
		t.Fatalf("completion was not routed: %v", err)
	}
	_, err = cs.Complete(testCtx(t, 10*time.Second), &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "nope"},
		Argument: mcp.CompleteParamsArgument{Name: "x", Value: "y"},
	})
	if err == nil || !strings.Contains(err.Error(), `unknown prompt "nope"`) {
		t.Errorf("completion of an unknown prompt: %v", err)
	}
}

// TestExampleConfig: the example config parses, and its disabled server is
// left out.
func TestExampleConfig(t *testing.T) {
	data, err := os.ReadFile("examples/mcp.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := mcpadapter.ParseConfigEnv(data, func(k string) (string, bool) { return "token-of-" + k, k == "GITHUB_TOKEN" })
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range FromConfig(cfg) {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "files,memory,github" {
		t.Errorf("servers %v, want files, memory, github", names)
	}
}

package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
)

// everythingTransports are server-everything over each of its transports, by
// name: each starts the server (or names its command) for a test.
func everythingTransports() map[string]func(t *testing.T) any {
	return map[string]func(t *testing.T) any{
		"stdio": func(t *testing.T) any {
			path, args, env := testenv.EverythingStdio(t)
			return mcpadapter.Command{Path: path, Args: args, Env: env}
		},
		"sse": func(t *testing.T) any {
			return testenv.StartEverythingHTTP(t, testenv.TransportSSE)
		},
		"streamable": func(t *testing.T) any {
			return testenv.StartEverythingHTTP(t, testenv.TransportStreamable)
		},
	}
}

// TestEverything runs the adapter against @modelcontextprotocol/server-everything,
// a server nobody here wrote, over each of its transports.
func TestEverything(t *testing.T) {
	t.Parallel()
	for name, target := range everythingTransports() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			a, err := mcpadapter.New(target(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			tools, err := a.Tools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]*mcpadapter.Tool{}
			for _, tl := range tools {
				byName[tl.Name] = tl
			}
			for _, want := range []string{"echo", "get-sum", "get-structured-content", "get-tiny-image", "get-resource-links", "get-resource-reference"} {
				if byName[want] == nil {
					t.Fatalf("tool %q missing from %d tools", want, len(tools))
				}
			}
			info, err := a.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := info.Servers[0]; got.Era != mcpadapter.EraHandshake || got.ProtocolVersion != "2025-11-25" {
				t.Errorf("negotiated %v %q, want handshake era 2025-11-25", got.Era, got.ProtocolVersion)
			}

			call := func(tool, args string) *mcpadapter.Result {
				t.Helper()
				res, err := byName[tool].Call(ctx, json.RawMessage(args))
				if err != nil {
					t.Fatalf("%s: %v", tool, err)
				}
				return res
			}

			if got := call("echo", `{"message":"hello"}`).Text(); got != "Echo: hello" {
				t.Errorf("echo: got %q", got)
			}
			if got := call("get-sum", `{"a":2,"b":3}`).Text(); !strings.Contains(got, "5") {
				t.Errorf("get-sum: got %q", got)
			}

			sc := call("get-structured-content", `{"location":"Chicago"}`)
			if sc.Artifact == nil {
				t.Fatal("get-structured-content: no artifact")
			}
			var weather struct {
				Temperature *float64 `json:"temperature"`
				Conditions  string   `json:"conditions"`
			}
			if err := sc.Artifact.Decode(&weather); err != nil || weather.Temperature == nil || weather.Conditions == "" {
				t.Errorf("get-structured-content artifact %s: %+v, %v", sc.Artifact.StructuredContent, weather, err)
			}
			if len(byName["get-structured-content"].OutputSchema) == 0 {
				t.Error("get-structured-content has no output schema")
			}

			img := call("get-tiny-image", `{}`)
			var png *mcpadapter.ImageContent
			for _, c := range img.Content {
				if c, ok := c.(*mcpadapter.ImageContent); ok {
					png = c
				}
			}
			if png == nil || png.MIMEType != "image/png" || !strings.HasPrefix(string(png.Data), "\x89PNG") {
				t.Errorf("get-tiny-image: no decoded PNG in %v", img.Content)
			}

			links := call("get-resource-links", `{"count":2}`)
			var n int
			for _, c := range links.Content {
				if l, ok := c.(*mcpadapter.ResourceLinkContent); ok {
					n++
					if !strings.HasPrefix(l.URI, "demo://resource/") {
						t.Errorf("resource link URI %q", l.URI)
					}
				}
			}
			if n != 2 {
				t.Errorf("get-resource-links: %d links, want 2", n)
			}

			ref := call("get-resource-reference", `{"resourceType":"Text","resourceId":1}`)
			var emb *mcpadapter.EmbeddedResourceContent
			for _, c := range ref.Content {
				if c, ok := c.(*mcpadapter.EmbeddedResourceContent); ok {
					emb = c
				}
			}
			if emb == nil || emb.URI == "" || emb.Text == "" {
				t.Errorf("get-resource-reference: no embedded text resource in %v", ref.Content)
			}

			// Invalid arguments: the server's own words come back as a
			// model-visible error result, not a Go error.
			bad := call("get-sum", `{"a":"x","b":1}`)
			if !bad.IsError || !strings.Contains(bad.Text(), "a") {
				t.Errorf("get-sum with a string: IsError=%v text %q", bad.IsError, bad.Text())
			}
			// Prompts and resources through the underlying client.
			cl := a.Client()
			if prompts, err := cl.ListPrompts(ctx); err != nil || len(prompts) == 0 {
				t.Errorf("prompts: %d, %v", len(prompts), err)
			}
			resources, err := cl.ListResources(ctx)
			if err != nil || len(resources) == 0 {
				t.Fatalf("resources: %d, %v", len(resources), err)
			}
			if rr, err := cl.ReadResource(ctx, resources[0].URI); err != nil || len(rr.Contents) == 0 {
				t.Errorf("read %s: %v", resources[0].URI, err)
			}
			var se *mcpadapter.ServerError
			if _, err := cl.ReadResource(ctx, "demo://no/such/thing"); !errors.As(err, &se) {
				t.Errorf("reading a missing resource: %v, want a *ServerError", err)
			}
			// An unknown tool, called through the client.
			unknown, err := a.Client().CallTool(ctx, "no-such-tool", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !unknown.IsError || !strings.Contains(unknown.Text(), "no-such-tool") {
				t.Errorf("unknown tool: IsError=%v text %q", unknown.IsError, unknown.Text())
			}
		})
	}
}

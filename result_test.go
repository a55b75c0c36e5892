package mcpadapter_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// resultTarget is one way to reach the test server, in one protocol era.
type resultTarget struct {
	name   string
	target func(t *testing.T) any
	era    mcpadapter.Era
}

// resultTargets reaches the test server over every transport, in each
// era the transport offers: stdio, in-process, streamable HTTP with
// SSE-framed and with JSON responses, and legacy HTTP+SSE.
func resultTargets() []resultTarget {
	var out []resultTarget
	for _, e := range eras {
		out = append(out,
			resultTarget{"stdio-" + e.era.String(), func(t *testing.T) any {
				return stdioServer(t, "-era", e.era.String())
			}, e.want},
			resultTarget{"in-process-" + e.era.String(), func(t *testing.T) any {
				return testserver.New(testserver.Options{Era: e.era})
			}, e.want},
		)
	}
	out = append(out,
		resultTarget{"streamable-sse-framed-" + testserver.Modern.String(), func(t *testing.T) any {
			return testserver.ServeStreamable(t, testserver.New(testserver.Options{}), testserver.Stateless())
		}, mcpadapter.EraDiscover},
		resultTarget{"streamable-json-" + testserver.Modern.String(), func(t *testing.T) any {
			return testserver.ServeStreamable(t, testserver.New(testserver.Options{}), testserver.Stateless(), testserver.JSONResponse())
		}, mcpadapter.EraDiscover},
		resultTarget{"streamable-sse-framed-" + testserver.Legacy.String(), func(t *testing.T) any {
			return testserver.ServeStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
		}, mcpadapter.EraHandshake},
		resultTarget{"streamable-json-" + testserver.Legacy.String(), func(t *testing.T) any {
			return testserver.ServeStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}), testserver.JSONResponse())
		}, mcpadapter.EraHandshake},
		resultTarget{"legacy-sse", func(t *testing.T) any {
			return testserver.ServeSSE(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
		}, mcpadapter.EraHandshake},
	)
	return out
}

// TestStructuredContentVerbatim: the artifact holds the server's
// structured content byte for byte (member order, integers beyond
// float64), on every transport, in both eras, for plain and interrupt-mode
// tools.
func TestStructuredContentVerbatim(t *testing.T) {
	for _, tc := range resultTargets() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			for _, mode := range []mcpadapter.ElicitationMode{mcpadapter.ElicitNone, mcpadapter.ElicitInterrupt} {
				a, err := mcpadapter.New(tc.target(t), &mcpadapter.Options{Elicitation: mode})
				if err != nil {
					t.Fatal(err)
				}
				defer a.Close()
				tools := toolMap(t, ctx, a)
				for range 2 { // the second call on a live connection
					res := mustCall(t, ctx, tools["precise"], `{}`)
					if res.Artifact == nil {
						t.Fatalf("mode %v: no artifact", mode)
					}
					if got := string(res.Artifact.StructuredContent); got != testserver.PreciseStructured {
						t.Errorf("mode %v: structured content %s, the server sent %s", mode, got, testserver.PreciseStructured)
					}
				}
				if info, err := a.Info(ctx); err != nil || info.Servers[0].Era != tc.era {
					t.Errorf("mode %v: era %+v, %v; want %v", mode, info, err, tc.era)
				}
			}
		})
	}
}

// TestUnknownContentKept: a block of a type this version does not know
// does not fail the call; it is kept, raw JSON included, the model reads
// a placeholder, and the blocks around it are converted as usual.
func TestUnknownContentKept(t *testing.T) {
	for _, tc := range resultTargets() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			for _, mode := range []mcpadapter.ElicitationMode{mcpadapter.ElicitNone, mcpadapter.ElicitInterrupt} {
				a, err := mcpadapter.New(tc.target(t), &mcpadapter.Options{Elicitation: mode})
				if err != nil {
					t.Fatal(err)
				}
				defer a.Close()
				tools := toolMap(t, ctx, a)
				res := mustCall(t, ctx, tools["hologram"], `{}`)
				checkHologram(t, res)
				// The connection is still good.
				if got := mustCall(t, ctx, tools["echo"], `{"text":"after"}`).Text(); got != "after" {
					t.Errorf("mode %v: echo after the hologram: %q", mode, got)
				}
			}
		})
	}
}

func checkHologram(t *testing.T, res *mcpadapter.Result) {
	t.Helper()
	if res.IsError || len(res.Content) != 2 {
		t.Fatalf("result %+v, want two blocks", res)
	}
	if tc, ok := res.Content[0].(*mcpadapter.TextContent); !ok || tc.Text != testserver.HologramText {
		t.Errorf("content[0] = %#v, want the text block", res.Content[0])
	}
	u, ok := res.Content[1].(*mcpadapter.UnknownContent)
	if !ok {
		t.Fatalf("content[1] = %#v, want *UnknownContent", res.Content[1])
	}
	if u.Type != "hologram" || u.Kind() != "hologram" || string(u.Raw) != testserver.HologramBlock {
		t.Errorf("unknown block %q (kind %q), raw %s; want hologram, %s", u.Type, u.Kind(), u.Raw, testserver.HologramBlock)
	}
	if u.ContentMeta()["vendor"] != "test" || u.ContentAnnotations() == nil || u.ContentAnnotations().Priority != 0.25 {
		t.Errorf("unknown block meta %v, annotations %+v", u.ContentMeta(), u.ContentAnnotations())
	}
	want := testserver.HologramText + "\n" + `["hologram" content, not shown: this client does not support the type]`
	if got := res.Text(); got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
	if strings.Contains(res.Text(), "12345678901234567890") {
		t.Error("the model was shown the unknown block's data")
	}
}

// BenchmarkCallResult measures one call of a tool without structured
// content (echo) and of one with it (add), in process and over streamable
// HTTP (SSE-framed and JSON responses): what keeping results as sent
// costs.
func BenchmarkCallResult(b *testing.B) {
	targets := []struct {
		name   string
		target func(b *testing.B) any
	}{
		{"in-process", func(*testing.B) any { return testserver.New(testserver.Options{}) }},
		{"streamable-sse", func(b *testing.B) any {
			return testserver.ServeStreamable(b, testserver.New(testserver.Options{}), testserver.Stateless())
		}},
		{"streamable-json", func(b *testing.B) any {
			return testserver.ServeStreamable(b, testserver.New(testserver.Options{}), testserver.Stateless(), testserver.JSONResponse())
		}},
	}
	for _, tg := range targets {
		for _, call := range []struct{ tool, args string }{{"echo", `{"text":"hello"}`}, {"add", `{"a":1,"b":2}`}} {
			b.Run(tg.name+"/"+call.tool, func(b *testing.B) {
				ctx := context.Background()
				a, err := mcpadapter.New(tg.target(b), nil)
				if err != nil {
					b.Fatal(err)
				}
				defer a.Close()
				tools, err := a.Tools(ctx)
				if err != nil {
					b.Fatal(err)
				}
				var tool *mcpadapter.Tool
				for _, t := range tools {
					if t.Name == call.tool {
						tool = t
					}
				}
				args := json.RawMessage(call.args)
				b.ReportAllocs()
				for b.Loop() {
					res, err := tool.Call(ctx, args)
					if err != nil || res.IsError {
						b.Fatal(err, res)
					}
				}
			})
		}
	}
}

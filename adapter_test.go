package mcpadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var eras = []struct {
	era     testserver.Era
	want    mcpadapter.Era
	version string
}{
	{testserver.Modern, mcpadapter.EraDiscover, "2026-07-28"},
	{testserver.Legacy, mcpadapter.EraHandshake, "2025-11-25"},
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// toolMap lists the adapter's tools by name.
func toolMap(t *testing.T, ctx context.Context, a *mcpadapter.Adapter) map[string]*mcpadapter.Tool {
	t.Helper()
	tools, err := a.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[string]*mcpadapter.Tool, len(tools))
	for _, tl := range tools {
		m[tl.Name] = tl
	}
	return m
}

func mustCall(t *testing.T, ctx context.Context, tool *mcpadapter.Tool, args string) *mcpadapter.Result {
	t.Helper()
	if tool == nil {
		t.Fatal("no such tool")
	}
	res, err := tool.Call(ctx, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s(%s): %v", tool.Name, args, err)
	}
	return res
}

func TestInProcessBothEras(t *testing.T) {
	t.Parallel()
	for _, e := range eras {
		t.Run(e.era.String(), func(t *testing.T) {
			ctx := testCtx(t)
			srv := testserver.New(testserver.Options{Era: e.era, Instructions: "use echo"})
			a, err := mcpadapter.New(srv, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			tools := toolMap(t, ctx, a)

			info, err := a.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			si := info.Servers[0]
			if info.Era != e.want || si.ProtocolVersion != e.version || si.Implementation.Name != testserver.DefaultName ||
				si.Instructions != "use echo" || si.Capabilities == nil || si.Capabilities.Tools == nil || si.Transport != "in-process" {
				t.Errorf("info = %+v (era %v)", si, info.Era)
			}

			if got := mustCall(t, ctx, tools["echo"], `{"text":"héllo"}`).Text(); got != "héllo" {
				t.Errorf("echo: %q", got)
			}

			sum := mustCall(t, ctx, tools["add"], `{"a":2,"b":3.5}`)
			var out struct{ Sum float64 }
			if sum.IsError || sum.Artifact == nil || sum.Artifact.Decode(&out) != nil || out.Sum != 5.5 {
				t.Errorf("add: %+v", sum)
			}
			if len(tools["add"].OutputSchema) == 0 {
				t.Error("add has no output schema")
			}

			fail := mustCall(t, ctx, tools["fail"], `{"message":"disk full"}`)
			if !fail.IsError || !strings.Contains(fail.Text(), "disk full") || fail.Artifact != nil {
				t.Errorf("fail: %+v %q", fail, fail.Text())
			}
			fs := mustCall(t, ctx, tools["fail_structured"], `{}`)
			if !fs.IsError || fs.Text() != "quota exceeded" || fs.Artifact == nil || !bytes.Contains(fs.Artifact.StructuredContent, []byte(`"QUOTA"`)) {
				t.Errorf("fail_structured: %+v", fs)
			}
		})
	}
}

func TestContentKinds(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	a, err := mcpadapter.New(testserver.New(testserver.Options{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools := toolMap(t, ctx, a)

	img, ok := mustCall(t, ctx, tools["image"], `{}`).Content[0].(*mcpadapter.ImageContent)
	if !ok || !bytes.Equal(img.Data, testserver.TinyPNG) || img.MIMEType != "image/png" ||
		img.Annotations == nil || img.Annotations.Priority != 0.5 || img.Annotations.Audience[0] != "user" || img.Meta["source"] != "test" {
		t.Errorf("image: %+v", img)
	}
	audio, ok := mustCall(t, ctx, tools["audio"], `{}`).Content[0].(*mcpadapter.AudioContent)
	if !ok || !bytes.Equal(audio.Data, testserver.TinyWAV) || audio.MIMEType != "audio/wav" {
		t.Errorf("audio: %+v", audio)
	}
	link := mustCall(t, ctx, tools["link"], `{}`)
	rl, ok := link.Content[0].(*mcpadapter.ResourceLinkContent)
	if !ok || rl.URI != testserver.DocURI || rl.Name != "doc1" || rl.Title != "Doc One" || rl.Size == nil || *rl.Size != 42 {
		t.Errorf("link: %+v", link.Content)
	}
	if _, ok := link.Content[1].(*mcpadapter.TextContent); !ok {
		t.Errorf("link: second block %T, want text", link.Content[1])
	}
	emb := mustCall(t, ctx, tools["embedded"], `{}`)
	txt, ok1 := emb.Content[0].(*mcpadapter.EmbeddedResourceContent)
	bin, ok2 := emb.Content[1].(*mcpadapter.EmbeddedResourceContent)
	if !ok1 || !ok2 || txt.Text != testserver.DocText || txt.Blob != nil || !bytes.Equal(bin.Blob, testserver.Blob) || bin.MIMEType != "application/octet-stream" {
		t.Errorf("embedded: %+v %+v", txt, bin)
	}
	if got := emb.Text(); !strings.Contains(got, testserver.DocText) || !strings.Contains(got, "10 bytes") {
		t.Errorf("embedded as text: %q", got)
	}
}

func TestSchemasVerbatim(t *testing.T) {
	t.Parallel()
	for _, e := range eras {
		t.Run(e.era.String(), func(t *testing.T) {
			ctx := testCtx(t)
			a, err := mcpadapter.New(testserver.New(testserver.Options{Era: e.era}), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			s := toolMap(t, ctx, a)["schema"]
			if string(s.InputSchema) != testserver.SchemaInput {
				t.Errorf("input schema changed on the way:\n got %s\nwant %s", s.InputSchema, testserver.SchemaInput)
			}
			if s.Title != "Schema test" || s.Annotations == nil || !s.Annotations.ReadOnlyHint || s.Meta["owner"] != "tests" || s.Server != a.Client().Name() {
				t.Errorf("tool metadata: %+v", s)
			}
			if got := mustCall(t, ctx, s, `{"target":{"host":"x"},"limit":12345678901234567890}`).Text(); got != `{"target":{"host":"x"},"limit":12345678901234567890}` {
				t.Errorf("arguments changed on the way: %s", got)
			}
		})
	}
}

func TestPagination(t *testing.T) {
	t.Parallel()
	for _, e := range eras {
		t.Run(e.era.String(), func(t *testing.T) {
			ctx := testCtx(t)
			srv, state := testserver.NewWithState(testserver.Options{Era: e.era, PageSize: 4, ManyTools: true})
			a, err := mcpadapter.New(srv, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			tools := toolMap(t, ctx, a)
			if tools["extra_01"] == nil || tools["extra_25"] == nil || tools["echo"] == nil {
				t.Fatalf("missing tools after pagination: %d tools", len(tools))
			}
			if state.ListCalls() < len(tools)/4 {
				t.Errorf("%d tools/list requests for %d tools at 4 a page", state.ListCalls(), len(tools))
			}
		})
	}
}

func TestModelVisibleErrors(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	a, err := mcpadapter.New(testserver.New(testserver.Options{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools := toolMap(t, ctx, a)
	for _, tc := range []struct{ name, args, want string }{
		{"echo", `{"text": 5}`, "text"},        // invalid params, refused by the server
		{"echo", `[1,2]`, "JSON object"},       // not an object
		{"echo", `{"text": "x"`, "valid JSON"}, // truncated
	} {
		res, err := tools[tc.name].Call(ctx, json.RawMessage(tc.args))
		if err != nil {
			t.Fatalf("%s(%s): Go error %v, want an error result", tc.name, tc.args, err)
		}
		if !res.IsError || !strings.Contains(res.Text(), tc.want) {
			t.Errorf("%s(%s): IsError=%v %q, want it to mention %q", tc.name, tc.args, res.IsError, res.Text(), tc.want)
		}
	}
	res, err := a.Client().CallTool(ctx, "nope", nil, nil)
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "nope") {
		t.Errorf("unknown tool: %v %+v", err, res)
	}
}

func TestToolsOutliveClose(t *testing.T) {
	t.Parallel()
	for _, e := range eras {
		t.Run(e.era.String(), func(t *testing.T) {
			ctx := testCtx(t)
			a, err := mcpadapter.New(testserver.New(testserver.Options{Era: e.era}), nil)
			if err != nil {
				t.Fatal(err)
			}
			echo := toolMap(t, ctx, a)["echo"]
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			if got := mustCall(t, ctx, echo, `{"text":"after close"}`).Text(); got != "after close" {
				t.Errorf("after Close: %q", got)
			}
			a.Close()
		})
	}
}

func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	for _, e := range eras {
		t.Run(e.era.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := testCtx(t)
				srv, state := testserver.NewWithState(testserver.Options{Era: e.era})
				a, err := mcpadapter.New(srv, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer a.Close()
				tools := toolMap(t, ctx, a)
				// 32 calls that each sleep 200 ms: run one by one they would
				// take 6.4 s; in parallel over one session, 200 ms (the clock
				// is synctest's).
				var wg sync.WaitGroup
				errs := make(chan error, 32)
				start := time.Now()
				for i := range 32 {
					wg.Go(func() {
						res, err := tools["slow"].Call(ctx, json.RawMessage(`{"ms":200}`))
						if err != nil || res.IsError {
							errs <- fmt.Errorf("call %d: %v %+v", i, err, res)
						}
					})
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Error(err)
				}
				if state.Calls("slow") != 32 {
					t.Errorf("server saw %d calls", state.Calls("slow"))
				}
				if d := time.Since(start); d != 200*time.Millisecond {
					t.Errorf("32 parallel 200 ms calls took %v: they did not all run at once", d)
				}
			})
		})
	}
}

func TestProgressPerCall(t *testing.T) {
	t.Parallel()
	for _, e := range eras {
		t.Run(e.era.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := testCtx(t)
				var global sync.Map
				c, err := mcpadapter.NewClient(testserver.New(testserver.Options{Era: e.era}), &mcpadapter.ClientOptions{
					ProgressHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
						global.Store(r.Params.ProgressToken, true)
					},
				})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				var mu sync.Mutex
				got := map[int][]mcpadapter.Progress{}
				var wg sync.WaitGroup
				for i := range 2 {
					wg.Go(func() {
						res, err := c.CallTool(ctx, "progress", json.RawMessage(fmt.Sprintf(`{"steps":%d}`, 3+i)), &mcpadapter.CallOptions{Progress: func(p mcpadapter.Progress) {
							mu.Lock()
							got[i] = append(got[i], p)
							mu.Unlock()
						}})
						if err != nil || res.IsError {
							t.Errorf("progress %d: %v %+v", i, err, res)
						}
					})
				}
				wg.Wait()
				// The last notification of a call may arrive just after its
				// result (in-process): wait until everything is idle.
				synctest.Wait()
				mu.Lock()
				defer mu.Unlock()
				for i := range 2 {
					ps := got[i]
					if len(ps) != 3+i {
						t.Errorf("call %d got %d progress notifications, want %d: %+v", i, len(ps), 3+i, ps)
						continue
					}
					last := ps[len(ps)-1]
					if last.Tool != "progress" || last.Total != float64(3+i) || last.Progress != float64(3+i) {
						t.Errorf("call %d last progress %+v", i, last)
					}
				}
				n := 0
				global.Range(func(any, any) bool { n++; return true })
				if n != 2 {
					t.Errorf("ProgressHandler saw %d tokens, want 2", n)
				}
			})
		})
	}
}

func TestTargets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		target any
		want   string
	}{
		{"./server.py", "mcpadapter.Command"},
		{"adapter_test.go", "Script"},
		{"ftp://example.com/mcp", "not an http(s) URL"},
		{"http:///mcp", "no host"},
		{42, "unsupported"},
		{nil, "want an http(s) URL"},
		{mcpadapter.Command{}, "Path is empty"},
		{(*mcp.Server)(nil), "nil"},
	} {
		_, err := mcpadapter.New(tc.target, nil)
		var te *mcpadapter.TargetError
		if !errors.As(err, &te) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%#v, nil) = %v, want a TargetError mentioning %q", tc.target, err, tc.want)
		}
	}
	if _, err := mcpadapter.NewClient(mcpadapter.Command{Path: "x"}, &mcpadapter.ClientOptions{Headers: map[string]string{"a": "b"}}); err == nil {
		t.Error("headers on a stdio target: no error")
	}
}

func TestProtocolVersionOption(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	var logs syncBuffer
	c, err := mcpadapter.NewClient(testserver.New(testserver.Options{}), &mcpadapter.ClientOptions{
		ProtocolVersion: "2025-11-25",
		Trace:           true,
		Logger:          slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Era != mcpadapter.EraHandshake || info.ProtocolVersion != "2025-11-25" {
		t.Errorf("asked for 2025-11-25 from a modern server, got %s (%v)", info.ProtocolVersion, info.Era)
	}
	if strings.Contains(logs.String(), "server/discover") {
		t.Errorf("probed server/discover anyway:\n%s", logs.String())
	}
}

func TestToolNamesSanitised(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	long := strings.Repeat("very_long_tool_name_", 5)
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	for _, name := range []string{"files.read", long, "plain"} {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran"}}}, nil
		})
	}
	a, err := mcpadapter.New(srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools, err := a.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	for _, tl := range tools {
		if !valid.MatchString(tl.Name) {
			t.Errorf("%q is not a valid model tool name", tl.Name)
		}
		changed := tl.Name != tl.OriginalName
		if got, _ := tl.Meta[mcpadapter.MetaOriginalName].(string); changed != (got == tl.OriginalName) {
			t.Errorf("%q (from %q): meta original name %q", tl.Name, tl.OriginalName, got)
		}
		if res, err := tl.Call(ctx, nil); err != nil || res.Text() != "ran" {
			t.Errorf("calling %q: %v %+v", tl.Name, err, res)
		}
	}
}

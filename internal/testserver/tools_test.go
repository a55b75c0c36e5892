package testserver

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestContentTools(t *testing.T) {
	t.Parallel()
	cs := connect(t, inMemory(t, New(Options{})), nil)

	res := call(t, cs, "image", nil)
	img, ok := res.Content[0].(*mcp.ImageContent)
	if len(res.Content) != 1 || !ok {
		t.Fatalf("image content = %#v", res.Content)
	}
	if !bytes.Equal(img.Data, TinyPNG) || img.MIMEType != "image/png" || img.Meta["source"] != "test" ||
		img.Annotations == nil || img.Annotations.Priority != 0.5 || len(img.Annotations.Audience) != 1 || img.Annotations.Audience[0] != "user" {
		t.Errorf("image = %+v (annotations %+v)", img, img.Annotations)
	}
	if cfg, err := png.DecodeConfig(bytes.NewReader(img.Data)); err != nil || cfg.Width != 1 {
		t.Errorf("image is not a 1x1 PNG: %v %+v", err, cfg)
	}

	res = call(t, cs, "audio", nil)
	if a, ok := res.Content[0].(*mcp.AudioContent); !ok || !bytes.Equal(a.Data, TinyWAV) || a.MIMEType != "audio/wav" {
		t.Errorf("audio = %#v", res.Content[0])
	}

	res = call(t, cs, "link", nil)
	l, ok := res.Content[0].(*mcp.ResourceLink)
	if len(res.Content) != 2 || !ok || l.URI != DocURI || l.Name != "doc1" || l.Title != "Doc One" ||
		l.MIMEType != "text/plain" || l.Size == nil || *l.Size != 42 || texts(res) == "" {
		t.Errorf("link = %#v", res.Content)
	}

	res = call(t, cs, "embedded", nil)
	if len(res.Content) != 2 {
		t.Fatalf("embedded content = %#v", res.Content)
	}
	e1, ok1 := res.Content[0].(*mcp.EmbeddedResource)
	e2, ok2 := res.Content[1].(*mcp.EmbeddedResource)
	if !ok1 || !ok2 || e1.Resource.URI != DocURI || e1.Resource.Text != DocText || e1.Resource.MIMEType != "text/plain" ||
		e2.Resource.URI != BinURI || !bytes.Equal(e2.Resource.Blob, Blob) || e2.Resource.MIMEType != "application/octet-stream" {
		t.Errorf("embedded = %+v, %+v", e1.Resource, e2.Resource)
	}

	res = call(t, cs, "fail_structured", nil)
	sc, _ := json.Marshal(res.StructuredContent)
	if !res.IsError || texts(res) != QuotaMessage || string(sc) != `{"code":"QUOTA","retryAfter":30}` {
		t.Errorf("fail_structured: IsError=%v text=%q structured=%s", res.IsError, texts(res), sc)
	}

	res = call(t, cs, "headers", nil)
	if texts(res) != "{}" {
		t.Errorf("headers over in-memory = %q", texts(res))
	}

	args := json.RawMessage(`{"target":{"host":"example.com"},"limit":12345678901234567890}`)
	res = call(t, cs, "schema", args)
	if texts(res) != string(args) {
		t.Errorf("schema echoed %q, want %q", texts(res), args)
	}
}

func TestToolList(t *testing.T) {
	t.Parallel()
	var wire syncBuffer
	srv, st := NewWithState(Options{PageSize: 5, ManyTools: true})
	cs := connect(t, &mcp.LoggingTransport{Transport: inMemory(t, srv), Writer: &wire}, nil)
	var tools []*mcp.Tool
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, tool)
	}
	const base = 20 // 15 basic and content tools, 3 that elicit, whoami and long_text
	if len(tools) != base+ManyToolsCount {
		t.Errorf("listed %d tools, want %d", len(tools), base+ManyToolsCount)
	}
	if got, want := st.ListCalls(), (base+ManyToolsCount+4)/5; got != want {
		t.Errorf("ListCalls = %d, want %d", got, want)
	}
	var schema, add *mcp.Tool
	for _, tool := range tools {
		switch tool.Name {
		case "schema":
			schema = tool
		case "add":
			add = tool
		}
	}
	if add == nil || add.OutputSchema == nil {
		t.Errorf("add has no output schema: %+v", add)
	}
	if schema == nil || schema.Title != "Schema test" || schema.Annotations == nil || !schema.Annotations.ReadOnlyHint ||
		schema.Annotations.Title != "Schema test" || schema.Meta["owner"] != "tests" {
		t.Errorf("schema tool = %+v", schema)
	}
	// The server sends the schema byte for byte (go-sdk clients then decode
	// it into map[string]any, losing key order and the big integer).
	if !strings.Contains(wire.String(), `"inputSchema":`+SchemaInput) {
		t.Errorf("wire does not carry the exact schema bytes")
	}
	if m, ok := schema.InputSchema.(map[string]any); ok {
		t.Logf("client-side schema maximum: %T %v", m["properties"].(map[string]any)["limit"].(map[string]any)["maximum"], m["properties"].(map[string]any)["limit"].(map[string]any)["maximum"])
	}
}

func TestCounters(t *testing.T) {
	t.Parallel()
	srv, st := NewWithState(Options{})
	cs := connect(t, inMemory(t, srv), nil)
	call(t, cs, "echo", map[string]any{"text": "a"})
	call(t, cs, "echo", map[string]any{"text": "b"})
	_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "nope"})
	if st.Calls("echo") != 2 || st.Calls("nope") != 1 || st.AllCalls()["echo"] != 2 {
		t.Errorf("calls = %v", st.AllCalls())
	}
	if h := st.LastHeaders("echo"); h != nil {
		t.Errorf("in-memory headers = %v", h)
	}

	// Cancellation of slow is observed by the server: cancelled once the
	// server runs it (a fixed delay can fire before the call arrives).
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_ = st.Wait(wctx, func(s *State) bool { return s.Calls("slow") == 1 })
		cancel()
	}()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 10000}}); err == nil {
		t.Fatal("cancelled slow call succeeded")
	}
	if err := st.Wait(wctx, func(s *State) bool { return s.Cancellations() == 1 }); err != nil {
		t.Errorf("server saw %d cancellations: %v", st.Cancellations(), err)
	}
	if got := texts(call(t, cs, "slow", map[string]any{"ms": 1})); got != "slept 1ms" {
		t.Errorf("slow = %q", got)
	}
}

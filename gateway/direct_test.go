package gateway

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDirectCallsFollowRegistry: the tools the fast path calls directly
// (catalog.isRegistered) are never ones go-sdk's registry has lost, even
// while a reload takes out tools whose new definitions go-sdk refuses: a
// direct call of one is then answered as go-sdk answers it (unknown
// tool), not relayed to its server.
func TestDirectCallsFollowRegistry(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "up", Era: testserver.Modern}), testserver.Stateless())
	type look struct{ registered, inRegistry bool }
	var g *Gateway
	var at *look // a_tool, when b_tool was left out
	opts := &Options{Logger: quietLogger(t), OnEvent: func(e Event) {
		if g != nil && e.Kind == ServerProblem && e.Err != nil && strings.Contains(e.Err.Error(), `"b_tool" left out`) {
			at = &look{g.cat.isRegistered("a_tool"), registryHas(t, g, "a_tool")}
		}
	}}
	var err error
	if g, err = New([]Server{{Name: "up", Target: up.URL}}, opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	def := func(name, typ string) *mcp.Tool {
		return &mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"` + typ + `"}`)}
	}
	g.cat.sync(map[string]*mcp.Tool{"a_tool": def("a_tool", "object"), "b_tool": def("b_tool", "object")}, nil, nil, nil)
	if !g.cat.isRegistered("a_tool") || !registryHas(t, g, "a_tool") {
		t.Fatal("a_tool was not registered")
	}
	// go-sdk refuses a tool whose input is not an object: a_tool, then
	// b_tool, are taken out of its registry.
	g.cat.sync(map[string]*mcp.Tool{"a_tool": def("a_tool", "array"), "b_tool": def("b_tool", "array")}, nil, nil, nil)
	switch {
	case at == nil:
		t.Fatal("b_tool was not left out")
	case at.inRegistry:
		t.Fatal("go-sdk's registry held a_tool when b_tool was left out")
	case at.registered:
		t.Error("the fast path took a_tool for registered after go-sdk's registry lost it")
	}
	if g.cat.isRegistered("a_tool") || g.cat.isRegistered("b_tool") {
		t.Error("tools left out are registered for the fast path")
	}
}

// registryHas reports whether go-sdk's registry of g's server holds the
// tool name, as a client listing the tools learns.
func registryHas(t *testing.T, g *Gateway, name string) bool {
	t.Helper()
	ctx := testCtx(t, 10*time.Second)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := g.server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "probe"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(res.Tools, func(tl *mcp.Tool) bool { return tl.Name == name })
}

// TestEncodeAnswer: a direct call's answer is written byte for byte as
// go-sdk's jsonrpc.EncodeMessage writes it.
func TestEncodeAnswer(t *testing.T) {
	result := json.RawMessage(`{"content":[{"type":"text","text":"a<b>&c \u2028"}],"resultType":"complete"}`)
	for _, raw := range []any{float64(0), float64(-999999999999999), float64(42), "abc", "a<b>&c", "é😀", "x\u2028y", ""} {
		id, err := jsonrpc.MakeID(raw)
		if err != nil {
			t.Fatal(err)
		}
		want, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: result})
		if err != nil {
			t.Fatal(err)
		}
		got, ok := encodeAnswer(id, result)
		if !ok {
			if s, isString := raw.(string); isString && s == "x\u2028y" {
				continue // left to EncodeMessage
			}
			t.Errorf("id %#v: not encoded", raw)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("id %#v:\n got %s\nwant %s", raw, got, want)
		}
	}
}

// TestMarshalDirect: a direct call's result is written as go-sdk's
// connection writes it, its result type where go-sdk writes it.
func TestMarshalDirect(t *testing.T) {
	for _, res := range []*mcp.CallToolResult{
		{Content: []mcp.Content{&mcp.TextContent{Text: "<b>&amp;</b> \u2028"}}},
		{Content: []mcp.Content{}, StructuredContent: map[string]any{"resultType": "nested", "x": []any{1.5, "<"}}, IsError: true},
		{Content: []mcp.Content{}, Meta: mcp.Meta{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "g"}}},
		{InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{Message: "<how many>", RequestedSchema: map[string]any{"type": "object"}}}, RequestState: "s"},
	} {
		for _, rt := range []string{"complete", "input_required"} {
			var want map[string]any
			enc, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(enc, &want); err != nil {
				t.Fatal(err)
			}
			want["resultType"] = rt
			got, err := marshalDirect(res, &oneRequest{result: res, resultType: rt})
			if err != nil {
				t.Fatal(err)
			}
			var gotMap map[string]any
			if err := json.Unmarshal(got, &gotMap); err != nil {
				t.Fatalf("%s: %v", got, err)
			}
			if g, w := mustJSON(gotMap), mustJSON(want); string(g) != string(w) {
				t.Errorf("got %s\nwant %s", g, w)
			}
			if bytes.Contains(got, []byte("<")) {
				t.Errorf("HTML characters written unescaped, as go-sdk does not: %s", got)
			}
		}
	}
}

// FuzzEncodeAnswer: for every id the fast path reads (readEnvelope) and
// every result a server's answer can become (marshalDirect of a tool's
// result, or another result as go-sdk's encoder writes it), the answer
// encodeAnswer writes is the one jsonrpc.EncodeMessage writes, byte for
// byte; it leaves an id to EncodeMessage only for a line or paragraph
// separator in it.
func FuzzEncodeAnswer(f *testing.F) {
	for _, id := range []string{`0`, `-0`, `999999999999999`, `-999999999999999`, `"abc"`, `""`, `"<a&b>"`, "\"a\u2028b\"", "\"\x7f\ufffe\"", `"😀"`} {
		for _, res := range []string{`{}`, `{"content":[{"type":"text","text":"<b>&amp; \u2028 \ud800"}],"resultType":"bogus"}`,
			`{"content":null,"structuredContent":{"n":[1.0,1e2,-0,12345678901234567890]},"_meta":{"<k>":"\u2029"}}`,
			`{"inputRequests":{"q":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object"}}}},"requestState":"s"}`,
			`[1,"<",null]`, `"x"`} {
			f.Add(id, res)
		}
	}
	f.Fuzz(func(t *testing.T, idJSON, result string) {
		req, ok := readEnvelope([]byte(`{"jsonrpc":"2.0","id":` + idJSON + `,"method":"tools/call","params":{}}`))
		if !ok {
			return
		}
		var raws []json.RawMessage
		var r mcp.CallToolResult
		if json.Unmarshal([]byte(result), &r) == nil {
			for _, rt := range []string{"complete", "input_required"} {
				if raw, err := marshalDirect(&r, &oneRequest{result: &r, resultType: rt}); err == nil {
					raws = append(raws, raw)
				}
			}
		}
		var v any
		if json.Unmarshal([]byte(result), &v) == nil {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if enc.Encode(v) == nil {
				raws = append(raws, bytes.TrimRight(buf.Bytes(), "\n"))
			}
		}
		for _, raw := range raws {
			want, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Result: raw})
			if err != nil {
				t.Fatalf("EncodeMessage of %s: %v", raw, err)
			}
			got, ok := encodeAnswer(req.ID, raw)
			if !ok {
				if s, _ := req.ID.Raw().(string); !strings.ContainsAny(s, "\u2028\u2029") {
					t.Fatalf("id %s left to EncodeMessage", idJSON)
				}
				continue
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("id %s, result %s:\n got %s\nwant %s", idJSON, raw, got, want)
			}
		}
	})
}

// FuzzPlainResult: a plain result of a direct call (plainResult) is
// written as marshalDirect writes it, byte for byte, whatever its texts,
// its _meta (the gateway's name for itself, alone or beside other
// members) and its result type; a result plainResult does not take
// (structured content, a block that is not plain text) is left to
// marshalDirect.
func FuzzPlainResult(f *testing.F) {
	for _, s := range []string{"hello", "", "<b>&amp;</b>", "\u2028\u2029", "\x00\x01\b\f\n\r\t\x7f", "é😀", "\xff\xfe", `"\`, "a\u0000b"} {
		f.Add(s, "x", uint8(0), false)
		f.Add("x", s, uint8(1), true)
		f.Add(s, s, uint8(2), false)
		f.Add(s, "", uint8(3), true)
		f.Add(s, "", uint8(4), false)
		f.Add(s, "y", uint8(5), false)
	}
	g := &Gateway{impl: &mcp.Implementation{Name: "gate<way>", Version: "v1&"}}
	g.serverInfoMeta = serverInfoMeta(g.impl)
	f.Fuzz(func(t *testing.T, text, other string, kind uint8, isError bool) {
		r := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isError}
		plain := true
		switch kind % 6 {
		case 0:
			r.Meta = mcp.Meta{mcp.MetaKeyServerInfo: g.impl}
		case 1:
			r.Meta = mcp.Meta{mcp.MetaKeyServerInfo: g.impl, other: map[string]any{"v": other, "n": 1.5}}
		case 2:
			r.Content = append(r.Content, &mcp.TextContent{Text: other})
			r.Meta = mcp.Meta{}
		case 3:
			r.Content = []mcp.Content{}
		case 4:
			r.StructuredContent = map[string]any{"text": other}
			plain = false
		case 5:
			r.Content = append(r.Content, &mcp.TextContent{Text: other, Annotations: &mcp.Annotations{Priority: 1}})
			plain = false
		}
		// "": a handshake-era session's call, whose result is written
		// with the type it holds (none here).
		for _, rt := range []string{"complete", "input_required", ""} {
			one := &oneRequest{result: r, resultType: rt}
			want, err := marshalDirect(r, one)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := g.plainResult(r, one)
			if ok != plain {
				t.Fatalf("%#v: taken %v, want %v", r, ok, plain)
			}
			if ok && !bytes.Equal(got, want) {
				t.Fatalf("plainResult:\n got %s\nwant %s", got, want)
			}
			if got, err := g.marshalResult(r, one); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("marshalResult: %v\n got %s\nwant %s", err, got, want)
			}
			if _, ok := g.plainResult(r, &oneRequest{result: &mcp.CallToolResult{}, resultType: rt}); ok {
				t.Fatal("took a result directTool did not make")
			}
		}
		// A result that holds a type of its own (go-sdk decoded one) is
		// written with it on a handshake-era session's call.
		data, err := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": isError, "resultType": other})
		if err != nil {
			t.Fatal(err)
		}
		held := &mcp.CallToolResult{}
		if json.Unmarshal(data, held) != nil {
			return
		}
		one := &oneRequest{result: held}
		want, err := marshalDirect(held, one)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := g.marshalResult(held, one); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("marshalResult of a result of type %q: %v\n got %s\nwant %s", other, err, got, want)
		}
	})
}

// heldResultType reads the result type go-sdk keeps in a CallToolResult:
// a go-sdk that no longer keeps it there fails this test, not the
// answers of handshake-era sessions.
func TestHeldResultType(t *testing.T) {
	for _, rt := range []string{"complete", "input_required", ""} {
		data := `{"content":[{"type":"text","text":"x"}]`
		if rt != "" {
			data += `,"resultType":"` + rt + `"`
		}
		var r mcp.CallToolResult
		if err := json.Unmarshal([]byte(data+"}"), &r); err != nil {
			t.Fatal(err)
		}
		if got := heldResultType(&r); got != rt {
			t.Errorf("%s}: got %q, want %q", data, got, rt)
		}
	}
}

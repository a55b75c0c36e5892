package gateway

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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

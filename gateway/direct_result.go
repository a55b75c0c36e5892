package gateway

import (
	"encoding/json"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// plainResult returns res, the result directTool made for a direct call
// (one.result), as marshalDirect writes it, without encoding/json's
// reflection, when res is plain: text blocks without _meta or
// annotations, no structured content, no input requests or request
// state. Its _meta, when it holds only the server's name for itself
// (leanMeta), is written from g.serverInfoMeta. ok is false for any other
// result, which marshalDirect then writes. FuzzPlainResult holds it to
// marshalDirect, byte for byte.
func (g *Gateway) plainResult(res mcp.Result, one *oneRequest) (data []byte, ok bool) {
	r, isCall := res.(*mcp.CallToolResult)
	if !isCall || r == nil || r != one.result || r.StructuredContent != nil || r.InputRequests != nil || r.RequestState != "" {
		return nil, false
	}
	var meta []byte
	if len(r.Meta) > 0 {
		if info, only := r.Meta[mcp.MetaKeyServerInfo]; only && len(r.Meta) == 1 && info == any(g.impl) && g.serverInfoMeta != nil {
			meta = g.serverInfoMeta
		} else {
			var err error
			if meta, err = json.Marshal(r.Meta); err != nil {
				return nil, false
			}
		}
	}
	size := 64 + len(meta) // the members' names and the result type
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok && t != nil {
			size += len(`{"type":"text","text":""},`) + len(t.Text)
		}
	}
	buf := make([]byte, 0, size)
	buf = append(buf, '{')
	if meta != nil {
		buf = append(buf, `"_meta":`...)
		buf = append(buf, meta...)
		buf = append(buf, ',')
	}
	buf = append(buf, `"content":`...)
	if r.Content == nil {
		buf = append(buf, "null"...)
	} else {
		buf = append(buf, '[')
		for i, c := range r.Content {
			t, ok := c.(*mcp.TextContent)
			if !ok || t == nil || t.Meta != nil || t.Annotations != nil {
				return nil, false
			}
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, `{"type":"text","text":`...)
			buf = appendHTMLString(buf, t.Text)
			buf = append(buf, '}')
		}
		buf = append(buf, ']')
	}
	if r.IsError {
		buf = append(buf, `,"isError":true`...)
	}
	if one.resultType != "" {
		buf = append(buf, `,"resultType":`...)
		buf = appendHTMLString(buf, one.resultType)
	}
	return append(buf, '}'), true
}

// appendHTMLString appends s as json.Marshal writes a string (HTML
// characters escaped).
func appendHTMLString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(buf, q...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}

// serverInfoMeta returns the _meta of a result that holds only impl, the
// server's name for itself, as json.Marshal writes it.
func serverInfoMeta(impl *mcp.Implementation) []byte {
	data, err := json.Marshal(mcp.Meta{mcp.MetaKeyServerInfo: impl})
	if err != nil {
		return nil
	}
	return data
}

// resultTypeField is the index of the result type go-sdk keeps in a
// CallToolResult, unexported, and its MarshalJSON writes; nil when go-sdk
// keeps none as a string.
var resultTypeField = func() []int {
	f, ok := reflect.TypeFor[mcp.CallToolResult]().FieldByName("resultType")
	if !ok || f.Type.Kind() != reflect.String {
		return nil
	}
	return f.Index
}()

// heldResultType returns the result type res, a CallToolResult, holds
// (what go-sdk decoded, or set for the result of a handler): "" when it
// holds none, which go-sdk's MarshalJSON then does not write; "?" when it
// cannot be read.
func heldResultType(res mcp.Result) string {
	r, ok := res.(*mcp.CallToolResult)
	if !ok || r == nil {
		return ""
	}
	if resultTypeField == nil {
		return "?"
	}
	return reflect.ValueOf(r).Elem().FieldByIndex(resultTypeField).String()
}

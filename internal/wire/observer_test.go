package wire

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// listAnswer is a tools/list result whose schemas go-sdk's maps would not
// keep verbatim: members out of order and a number beyond float64.
const listAnswer = `{"tools":[{"name":"sum","inputSchema":{"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"integer","maximum":12345678901234567890}}},"outputSchema":{"type":"object"}},{"name":"bare","inputSchema":{"type":"object"}}]}`

func request(t *testing.T, id int64, method, params string) *jsonrpc.Request {
	t.Helper()
	rid, err := jsonrpc.MakeID(float64(id))
	if err != nil {
		t.Fatal(err)
	}
	return &jsonrpc.Request{ID: rid, Method: method, Params: json.RawMessage(params)}
}

func response(req *jsonrpc.Request, result string) *jsonrpc.Response {
	return &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(result)}
}

func TestObserverKeepsListedSchemas(t *testing.T) {
	o := NewObserver("srv", nil)
	req := request(t, 1, "tools/list", `{}`)
	o.Sent(req, nil)
	o.Received(response(req, listAnswer), nil)

	in, out, ok := o.RawSchemas("sum")
	if !ok {
		t.Fatal("no schemas for sum")
	}
	if want := `{"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"integer","maximum":12345678901234567890}}}`; string(in) != want {
		t.Errorf("input schema %s, want %s", in, want)
	}
	if string(out) != `{"type":"object"}` {
		t.Errorf("output schema %s", out)
	}
	if _, out, ok := o.RawSchemas("bare"); !ok || len(out) != 0 {
		t.Errorf("bare: output %q, ok %v; want none, true", out, ok)
	}
	if _, _, ok := o.RawSchemas("missing"); ok {
		t.Error("schemas for a tool never listed")
	}
}

func TestObserverIgnoresOtherAnswers(t *testing.T) {
	o := NewObserver("srv", nil)
	call := request(t, 1, "tools/call", `{"name":"sum"}`)
	o.Sent(call, nil)
	o.Received(response(call, listAnswer), nil) // not a tools/list answer
	list := request(t, 2, "tools/list", `{}`)
	o.Sent(list, nil)
	o.Received(&jsonrpc.Response{ID: list.ID, Error: &jsonrpc.Error{Code: -32603, Message: "boom"}}, nil)
	if _, _, ok := o.RawSchemas("sum"); ok {
		t.Error("schemas kept from an answer that was not a successful tools/list")
	}
	o.KeepSchemas(json.RawMessage(listAnswer))
	if _, _, ok := o.RawSchemas("sum"); !ok {
		t.Error("KeepSchemas kept nothing")
	}
}

func TestObserverTraceRedacts(t *testing.T) {
	var buf bytes.Buffer
	trace := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o := NewObserver("traced", trace)
	req := request(t, 1, "tools/call", `{"name":"login","arguments":{"user":"ann","password":"hunter2","token":"t0k3n","headers":{"Authorization":"Bearer abc123"},"note":"Bearer xyz789"}}`)
	o.Sent(req, nil)
	o.Received(response(req, `{"content":[{"type":"text","text":"ok"}],"_meta":{"session_id":"sid-42"}}`), nil)

	out := buf.String()
	for _, want := range []string{`"msg":"mcp send"`, `"msg":"mcp recv"`, `"server":"traced"`, `tools/call`, `ann`, `[REDACTED]`} {
		if !strings.Contains(out, want) {
			t.Errorf("trace lacks %q:\n%s", want, out)
		}
	}
	for _, secret := range []string{"hunter2", "t0k3n", "abc123", "xyz789", "sid-42"} {
		if strings.Contains(out, secret) {
			t.Errorf("trace leaks %q:\n%s", secret, out)
		}
	}
}

func TestObserverTraceOffBelowDebug(t *testing.T) {
	var buf bytes.Buffer
	o := NewObserver("srv", slog.New(slog.NewJSONHandler(&buf, nil))) // Info level
	o.Sent(request(t, 1, "ping", `{}`), nil)
	if buf.Len() != 0 {
		t.Errorf("traced below debug level: %s", buf.String())
	}
}

func TestNilObserver(t *testing.T) {
	var o *Observer
	req := request(t, 1, "tools/list", `{}`)
	o.Sent(req, nil)
	o.Received(response(req, listAnswer), nil)
	o.KeepSchemas(json.RawMessage(listAnswer))
	if _, _, ok := o.RawSchemas("sum"); ok {
		t.Error("a nil observer returned schemas")
	}
}

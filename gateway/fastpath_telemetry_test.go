package gateway

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFastPathLeanTelemetry: with Options.Telemetry, an operation of a
// call answered on the fast path carries the request's whole _meta, the
// client's info and capabilities too, as on go-sdk's path.
func TestFastPathLeanTelemetry(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "up", Era: testserver.Modern}), testserver.Stateless())
	metaOf := func(slowOnly bool) mcp.Meta {
		rec := &recordingTelemetry{}
		g, url := startGateway(t, []Server{{Name: "up", Target: up.URL}}, &Options{Telemetry: rec, slowPathOnly: slowOnly})
		body := leanCall("1", `"echo"`, `{"text":"x"}`, `"io.modelcontextprotocol/clientInfo":{"name":"n","version":"2"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"experimental":{"n":[1.5,true,null]}},"x-trace":"t"`)
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		for k, v := range fastHeaders("echo") {
			r.Header.Set(k, v)
		}
		if taken := g.fastRequestOf(r) != nil; taken == slowOnly {
			t.Fatalf("slow path only %v: fast path taken %v", slowOnly, taken)
		}
		if a := sendCase(t, url, fastCase{name: "echo", header: map[string]string{"Mcp-Name": "echo"}, body: body}); a.Status != http.StatusOK {
			t.Fatalf("answer %+v", a)
		}
		ops := rec.find("tools/call")
		if len(ops) != 1 {
			t.Fatalf("%d tools/call operations", len(ops))
		}
		return ops[0].op.Meta
	}
	fast, slow := metaOf(false), metaOf(true)
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("the operation's _meta on the fast path\n%#v\non go-sdk's\n%#v", fast, slow)
	}
	if _, ok := fast[mcp.MetaKeyClientCapabilities].(map[string]any); !ok || fast["x-trace"] != "t" || fast[mcp.MetaKeyProtocolVersion] != v0728 {
		t.Errorf("the operation's _meta: %#v", fast)
	}
}

// TestFastPathTelemetryOperations: with Options.Telemetry, a call answered
// on the fast path (direct or on its session) is an operation that names
// and ends as on go-sdk's path: what it says of the call, of the client,
// and its outcome.
func TestFastPathTelemetryOperations(t *testing.T) {
	upServer := testserver.New(testserver.Options{Name: "up", Era: testserver.Modern})
	up := testserver.StartStreamable(t, upServer, testserver.Stateless())
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	servers := []Server{{Name: "up", Target: up.URL}, {Name: "old", Target: old.URL}, {Name: "evil", Target: hostileProxy(t, up.URL)}}
	cases := []fastCase{
		{name: "echo", header: map[string]string{"Mcp-Name": "up_echo"}, body: fastCall("1", `"up_echo"`, `{"text":"x"}`)},
		{name: "tool error", header: map[string]string{"Mcp-Name": "up_fail_structured"}, body: fastCall("2", `"up_fail_structured"`, `{}`)},
		{name: "upstream protocol error", header: map[string]string{"Mcp-Name": "up_crash"}, body: fastCall("3", `"up_crash"`, `{}`)},
		{name: "unknown tool", header: map[string]string{"Mcp-Name": "nope"}, body: fastCall("4", `"nope"`, `{}`)},
		{name: "input_required", header: map[string]string{"Mcp-Name": "old_book"}, body: fastCall("5", `"old_book"`, `{"date":"mon"}`)},
		evilCase("6", "input requests and content", `{"content":[{"type":"text","text":"x"}],"inputRequests":{"q":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object"}}}}}`),
		{name: "session", header: map[string]string{"Mcp-Name": "up_echo"}, body: strings.Replace(fastCall("7", `"up_echo"`, `{"text":"x"}`), `"arguments"`, `"inputResponses":null,"arguments"`, 1)},
	}
	type outcome struct {
		Op  mcpadapter.ServerOperation
		Res mcpadapter.ServerOperationResult
		Err string
	}
	run := func(slowOnly bool) []outcome {
		rec := &recordingTelemetry{}
		g, url := startGateway(t, servers, &Options{Telemetry: rec, slowPathOnly: slowOnly})
		var out []outcome
		for _, c := range cases {
			r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(c.body))
			for k, v := range fastHeaders(c.header["Mcp-Name"]) {
				r.Header.Set(k, v)
			}
			f := g.fastRequestOf(r)
			if (f != nil) == slowOnly || f != nil && (f.call == nil) != (c.name == "session" || c.name == "unknown tool") {
				t.Fatalf("slow path only %v, %s: the call takes another path (%+v)", slowOnly, c.name, f)
			}
			sendCase(t, url, c)
			ops := rec.find("tools/call")
			if len(ops) != len(out)+1 {
				t.Fatalf("slow path only %v, %s: %d tools/call operations", slowOnly, c.name, len(ops))
			}
			o := outcome{Op: ops[len(ops)-1].op, Res: *ops[len(ops)-1].res}
			o.Op.HTTPContext, o.Op.RemoteAddr = nil, ""
			if o.Res.Err != nil {
				o.Err, o.Res.Err = o.Res.Err.Error(), nil
			}
			out = append(out, o)
		}
		return out
	}
	fast, slow := run(false), run(true)
	for i, c := range cases {
		if !reflect.DeepEqual(fast[i], slow[i]) {
			t.Errorf("%s: the operation on the fast path\n%+v\non go-sdk's\n%+v", c.name, fast[i], slow[i])
		}
	}
}

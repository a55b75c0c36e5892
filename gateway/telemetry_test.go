package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recordedOp is an operation a recordingTelemetry saw, with its end.
type recordedOp struct {
	id  int
	op  mcpadapter.ServerOperation
	res *mcpadapter.ServerOperationResult
}

// recordingTelemetry records the operations it sees; its trace context
// is the key opKey on the operation's context, which InjectMeta writes
// as "traceparent".
type recordingTelemetry struct {
	mu  sync.Mutex
	ops []*recordedOp
}

type opKey struct{}

func (r *recordingTelemetry) StartServerOperation(ctx context.Context, op mcpadapter.ServerOperation) (context.Context, func(mcpadapter.ServerOperationResult)) {
	r.mu.Lock()
	id := len(r.ops) + 1
	rec := &recordedOp{id: id, op: op}
	r.ops = append(r.ops, rec)
	r.mu.Unlock()
	return context.WithValue(ctx, opKey{}, id), func(res mcpadapter.ServerOperationResult) {
		r.mu.Lock()
		rec.res = &res
		r.mu.Unlock()
	}
}

func (r *recordingTelemetry) InjectMeta(ctx context.Context, meta map[string]any) {
	if id, ok := ctx.Value(opKey{}).(int); ok {
		meta["traceparent"] = "op-" + strconv.Itoa(id)
	}
}

// find returns the ended operations of method.
func (r *recordingTelemetry) find(method string) []*recordedOp {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*recordedOp
	for _, o := range r.ops {
		if o.op.Method == method && o.res != nil {
			out = append(out, o)
		}
	}
	return out
}

// TestTelemetryOperations: with Options.Telemetry each client request is
// an operation that ends with its outcome, named with what the gateway
// knows (the server and tool of a tools/call, the prompt of a
// prompts/get, the resource of a resources/read) and nothing a client
// made up; the client's _meta and headers are handed over; the server
// gets the operation's trace context in its _meta; notifications are not
// operations.
func TestTelemetryOperations(t *testing.T) {
	tel := &recordingTelemetry{}
	_, url := startGateway(t, []Server{{Name: "up", Target: testserver.New(testserver.Options{Resources: true})}}, &Options{Telemetry: tel})
	cs := connect(t, url, v1125, nil)
	ctx := testCtx(t, 30*time.Second)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Meta: mcp.Meta{"traceparent": "client's"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fail", Arguments: map[string]any{"message": "boom"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "made-up"}); err == nil {
		t.Fatal("an unknown tool was called")
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: testserver.ResourceA}); err != nil {
		t.Fatal(err)
	}

	calls := tel.find("tools/call")
	if len(calls) != 3 {
		t.Fatalf("%d tools/call operations; want 3", len(calls))
	}
	w := calls[0]
	if w.op.Tool != "whoami" || w.op.Server != "up" || w.op.Transport != "streamable-http" || w.op.ProtocolVersion != v1125 ||
		w.op.SessionID == "" || w.op.Meta["traceparent"] != "client's" || w.op.Header == nil || w.res.Err != nil || w.res.ErrorType != "" {
		t.Errorf("whoami operation: %+v, %+v", w.op, w.res)
	}
	if got, _ := whoamiOf(t, res).Meta["traceparent"].(string); !strings.HasPrefix(got, "op-") {
		t.Errorf("the server saw traceparent %v; want the gateway operation's", got)
	}
	if f := calls[1]; f.op.Tool != "fail" || !f.res.ToolError || f.res.ErrorType != "tool_error" {
		t.Errorf("fail operation: %+v, %+v", f.op, f.res)
	}
	if u := calls[2]; u.op.Tool != "" || u.op.Server != "" || u.res.ErrorType != "-32602" || u.res.Code != -32602 || u.res.Err == nil {
		t.Errorf("unknown tool operation: %+v, %+v", u.op, u.res)
	}
	if p := tel.find("prompts/get"); len(p) != 1 || p[0].op.Prompt != "greet" || p[0].op.Server != "up" {
		t.Errorf("prompts/get operations: %+v", p)
	}
	if r := tel.find("resources/read"); len(r) != 1 || r[0].op.ResourceURI != testserver.ResourceA || r[0].op.Server != "up" {
		t.Errorf("resources/read operations: %+v", r)
	}
	if len(tel.find("initialize")) != 1 || len(tel.find("notifications/initialized")) != 0 {
		t.Error("want an initialize operation and no notification's")
	}
}

// TestTelemetryStdio: over stdio an operation's transport is "stdio",
// without headers.
func TestTelemetryStdio(t *testing.T) {
	tel := &recordingTelemetry{}
	g, err := New([]Server{{Name: "s", Target: testserver.New(testserver.Options{Era: testserver.Legacy})}}, &Options{Logger: quietLogger(t), Telemetry: tel})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ctx := testCtx(t, 30*time.Second)
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	cr, gw := io.Pipe()
	gr, cw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- g.ServeStdio(ctx, gr, gw) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-client"}, nil).Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
		t.Fatal(err)
	}
	_ = cs.Close()
	_ = cw.Close()
	<-done
	c := tel.find("tools/call")
	if len(c) != 1 || c[0].op.Transport != "stdio" || c[0].op.Header != nil || c[0].op.Server != "s" {
		t.Errorf("stdio operations: %+v", c)
	}
}

// whoamiOf decodes a whoami tool's result.
func whoamiOf(t *testing.T, res *mcp.CallToolResult) testserver.Whoami {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var w testserver.Whoami
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatalf("whoami result %s: %v", b, err)
	}
	return w
}

// TestTelemetryTaskOperations: a tasks/get is an operation whose server
// is the one its task id names, when the gateway has it.
func TestTelemetryTaskOperations(t *testing.T) {
	tel := &recordingTelemetry{}
	_, url := startGateway(t, []Server{{Name: "up", Target: testserver.New(testserver.Options{})}}, &Options{Telemetry: tel})
	r := newRawRPC(t, url, v1125, "", `{}`)
	hex := strings.Repeat("0a", 16)
	for _, id := range []string{"up." + hex, "nosuch." + hex, "not an id"} {
		if e := r.callErr("tasks/get", `{"taskId":"`+id+`"}`); e == "" {
			t.Fatalf("tasks/get %s: no error", id)
		}
	}
	ops := tel.find("tasks/get")
	if len(ops) != 3 {
		t.Fatalf("%d tasks/get operations; want 3", len(ops))
	}
	for i, want := range []string{"up", "", ""} {
		if ops[i].op.Server != want || ops[i].res.Err == nil {
			t.Errorf("tasks/get %d: server %q (want %q), %+v", i, ops[i].op.Server, want, ops[i].res)
		}
	}
}

// TestTelemetryTaskRun: the run of a task the gateway makes is an
// operation "tasks/run" in the trace of the tools/call that made it, and
// the server gets the run's trace context.
func TestTelemetryTaskRun(t *testing.T) {
	tel := &recordingTelemetry{}
	_, url := startGateway(t, []Server{{Name: "up", Target: testserver.New(testserver.Options{})}}, &Options{Telemetry: tel})
	r := newRawRPC(t, url, v1125, "", `{}`)
	id := r.startTask("whoami", `{}`)
	r.waitStatus(id, "completed")
	res := r.call("tasks/result", `{"taskId":"`+id+`"}`)

	calls, runs := tel.find("tools/call"), tel.find("tasks/run")
	if len(calls) != 1 || len(runs) != 1 {
		t.Fatalf("%d tools/call and %d tasks/run operations; want 1 and 1", len(calls), len(runs))
	}
	run := runs[0]
	if run.op.Meta["traceparent"] != "op-"+strconv.Itoa(calls[0].id) || run.op.Tool != "whoami" || run.op.Server != "up" || run.res.Err != nil {
		t.Errorf("tasks/run operation: %+v, %+v; the tools/call's is op-%d", run.op, run.res, calls[0].id)
	}
	sc, _ := res["structuredContent"].(map[string]any)
	meta, _ := sc["meta"].(map[string]any)
	if got, want := meta["traceparent"], "op-"+strconv.Itoa(run.id); got != want {
		t.Errorf("the server saw traceparent %v; want %s (the run's)", got, want)
	}
}

// TestCutURI: a client's resource URI reaches the telemetry cut at 1 KiB,
// valid UTF-8 even when the cut splits a character.
func TestCutURI(t *testing.T) {
	for _, uri := range []string{"test://a", "x" + strings.Repeat("é", 2000), strings.Repeat("a", 5000), "bad\xff"} {
		got := cutURI(uri)
		if len(got) > maxTelemetryURI || !utf8.ValidString(got) || !strings.HasPrefix(uri, got[:min(len(got), 3)]) {
			t.Errorf("cutURI(%.20q...) = %.20q... (%d bytes)", uri, got, len(got))
		}
	}
	if cutURI("test://a") != "test://a" {
		t.Error("a short URI changed")
	}
}

// TestTelemetryUnsetForwardsClientTrace: without Options.Telemetry the
// client's trace context reaches the server as the client sent it.
func TestTelemetryUnsetForwardsClientTrace(t *testing.T) {
	_, url := startGateway(t, []Server{{Name: "up", Target: testserver.New(testserver.Options{})}}, nil)
	for _, v := range []string{v1125, v0728} {
		cs := connect(t, url, v, nil)
		tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		res, err := cs.CallTool(testCtx(t, 30*time.Second), &mcp.CallToolParams{Name: "whoami", Meta: mcp.Meta{"traceparent": tp, "tracestate": "rojo=1"}})
		if err != nil {
			t.Fatal(err)
		}
		if m := whoamiOf(t, res).Meta; m["traceparent"] != tp || m["tracestate"] != "rojo=1" {
			t.Errorf("%s: the server saw %v", v, m)
		}
	}
}

// TestTelemetryHostileVersion: a request naming a protocol version the
// gateway does not know gives no operation that version (a client cannot
// make new values of the metric's attribute).
func TestTelemetryHostileVersion(t *testing.T) {
	tel := &recordingTelemetry{}
	_, url := startGateway(t, []Server{{Name: "up", Target: testserver.New(testserver.Options{})}}, &Options{Telemetry: tel})
	r := newRawRPC(t, url, v0728, "", `{}`)
	// The header must name the _meta's version (go-sdk refuses a request
	// where they differ).
	const hostile = "9999-99-99-hostile"
	req, _ := http.NewRequestWithContext(testCtx(t, 30*time.Second), http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{`+
		`"io.modelcontextprotocol/protocolVersion":"`+hostile+`","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},`+
		`"io.modelcontextprotocol/clientCapabilities":{}}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", hostile)
	req.Header.Set("Mcp-Method", "tools/list")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// go-sdk refuses the version before the gateway sees the request;
	// knownVersion guards the operation if it ever does not.
	n := len(tel.find("tools/list"))
	for _, o := range tel.find("tools/list") {
		if v := o.op.ProtocolVersion; v != "" {
			t.Errorf("operation version %q (answer %s)", v, body)
		}
	}
	r.call("tools/list", `{}`)
	if ops := tel.find("tools/list"); len(ops) != n+1 || ops[n].op.ProtocolVersion != v0728 {
		t.Errorf("a known version is left out: %+v", ops)
	}
	if knownVersion(hostile) || !knownVersion(v1125) {
		t.Error("knownVersion")
	}
}

// TestTelemetryOwnsTraceContext: with Options.Telemetry the trace context
// a server gets is the gateway operation's alone. The client's
// tracestate and baggage, which the operation's context does not carry
// (this telemetry writes a traceparent only), never reach the server,
// whether the client's traceparent came with them in _meta or not; the
// client's other _meta entries do.
func TestTelemetryOwnsTraceContext(t *testing.T) {
	tel := &recordingTelemetry{}
	_, url := startGateway(t, []Server{{Name: "up", Target: testserver.New(testserver.Options{})}}, &Options{Telemetry: tel})
	for _, v := range []string{v1125, v0728} {
		cs := connect(t, url, v, nil)
		for _, meta := range []mcp.Meta{
			{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate": "evil=1", "baggage": "user=alice", "mine": "kept"},
			{"tracestate": "evil=1", "baggage": "user=alice", "mine": "kept"},
		} {
			res, err := cs.CallTool(testCtx(t, 30*time.Second), &mcp.CallToolParams{Name: "whoami", Meta: meta})
			if err != nil {
				t.Fatal(err)
			}
			m := whoamiOf(t, res).Meta
			if tp, _ := m["traceparent"].(string); !strings.HasPrefix(tp, "op-") || m["tracestate"] != nil || m["baggage"] != nil || m["mine"] != "kept" {
				t.Errorf("%s, client _meta %v: the server saw %v; want the operation's traceparent alone, and mine", v, meta, m)
			}
		}
	}
}

// clientTelemetry is a mcpadapter.Telemetry (the gateway's
// Options.Client.Telemetry) that records, as text, every operation it
// sees and how each ended.
type clientTelemetry struct {
	mu   sync.Mutex
	seen []string
}

func (c *clientTelemetry) StartOperation(ctx context.Context, op mcpadapter.Operation) (context.Context, func(mcpadapter.OperationResult)) {
	c.mu.Lock()
	c.seen = append(c.seen, fmt.Sprintf("start %+v", op))
	c.mu.Unlock()
	return ctx, func(r mcpadapter.OperationResult) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.seen = append(c.seen, fmt.Sprintf("end %s %s: %v", op.Method, r.ErrorType, r.Err))
	}
}

func (c *clientTelemetry) InjectMeta(context.Context, map[string]any) {}

func (c *clientTelemetry) all() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.seen, "\n")
}

// echoAuthServer is a server whose tool "auth" fails with an error that
// quotes the Authorization header of its request, in its message and its
// data, as a careless or hostile server may.
func echoAuthServer(t *testing.T) string {
	srv := mcp.NewServer(&mcp.Implementation{Name: "echo-auth", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "auth"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		sent := req.Extra.Header.Get("Authorization")
		data, err := json.Marshal(map[string]any{"sent": sent, "parts": strings.Fields(sent)})
		if err != nil {
			return nil, nil, err
		}
		return nil, nil, &jsonrpc.Error{Code: -32001, Message: "refused the credential " + sent, Data: data}
	})
	return testserver.StartStreamable(t, srv).URL
}

// TestTelemetryClientSecretsNeverShown: the secrets of a config (a token
// in a URL, its password, an Authorization header, even one a server
// quotes in its error) reach neither the gateway's Options.Telemetry nor
// its Options.Client.Telemetry: not an operation's URL, not its error.
func TestTelemetryClientSecretsNeverShown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	doc := fmt.Sprintf(`{"mcpServers": {
		"down": {"url": "http://user:SECRET-PASSWORD@%s/mcp?api_key=SECRET-IN-QUERY", "headers": {"Authorization": "Bearer SECRET-IN-HEADER"}},
		"quoting": {"url": %q, "headers": {"Authorization": "Bearer SECRET-QUOTED-TOKEN"}}
	}}`, closed, echoAuthServer(t)+"?token=SECRET-TOKEN-QUERY")
	cfg, err := mcpadapter.ParseConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	srvTel, cliTel := &recordingTelemetry{}, &clientTelemetry{}
	_, url := startGateway(t, FromConfig(cfg), &Options{Telemetry: srvTel, Client: &mcpadapter.ClientOptions{Telemetry: cliTel}})
	cs := connect(t, url, v1125, nil)
	ctx := testCtx(t, 30*time.Second)
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "quoting_auth"}); err == nil {
		t.Fatal("quoting_auth did not fail")
	}
	_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "down_echo"})
	seen := cliTel.all()
	if !strings.Contains(seen, "refused the credential") {
		t.Fatalf("the client telemetry never saw the server's error:\n%s", seen)
	}
	for _, o := range srvTel.find("tools/call") {
		seen += fmt.Sprintf("\nserver %v", o.res.Err)
	}
	for _, secret := range []string{"SECRET-PASSWORD", "SECRET-IN-QUERY", "SECRET-IN-HEADER", "SECRET-QUOTED-TOKEN", "SECRET-TOKEN-QUERY"} {
		if i := strings.Index(seen, secret); i >= 0 {
			t.Errorf("%s shown to the telemetry: ...%s...", secret, seen[max(0, i-200):min(len(seen), i+100)])
		}
	}
}

// httpWhoKey is where TestTelemetryConcurrentPrincipals's HTTP server
// puts the token of each request, in the request's context.
type httpWhoKey struct{}

// TestTelemetryConcurrentPrincipals: alice and bob call at once, each
// with trace contexts of their own, over both eras. Every call's
// operation is its caller's (principal, trace context, the HTTP
// request's context) and the server gets, for each call, the trace
// context of that call's operation: nothing of one principal's reaches
// the other's operation or call.
func TestTelemetryConcurrentPrincipals(t *testing.T) {
	tel := &recordingTelemetry{}
	g, err := New([]Server{{Name: "up", Target: testserver.New(testserver.Options{})}}, &Options{Logger: quietLogger(t), Telemetry: tel})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	if err := g.Start(testCtx(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: token, Expiration: time.Now().Add(time.Hour)}, nil
	}
	mark := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		g.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), httpWhoKey{}, who)))
	})
	ts := httptest.NewServer(auth.RequireBearerToken(verify, nil)(mark))
	t.Cleanup(ts.Close)
	const calls = 10
	type seen struct{ who, sent, got string }
	var mu sync.Mutex
	var all []seen
	var wg sync.WaitGroup
	for _, who := range []string{"alice", "bob"} {
		for _, v := range []string{v1125, v0728} {
			c := mcp.NewClient(&mcp.Implementation{Name: who, Version: "1"}, nil)
			cs, err := c.Connect(testCtx(t, 30*time.Second), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{who}}},
				&mcp.ClientSessionOptions{ProtocolVersion: v})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cs.Close() })
			for i := range calls {
				wg.Go(func() {
					sent := fmt.Sprintf("client-%s-%s-%d", who, v, i)
					res, err := cs.CallTool(testCtx(t, 30*time.Second), &mcp.CallToolParams{Name: "whoami", Meta: mcp.Meta{"traceparent": sent}})
					if err != nil {
						t.Errorf("%s: %v", sent, err)
						return
					}
					got, _ := whoamiOf(t, res).Meta["traceparent"].(string)
					mu.Lock()
					all = append(all, seen{who, sent, got})
					mu.Unlock()
				})
			}
		}
	}
	wg.Wait()
	ops := map[string]*recordedOp{}
	for _, o := range tel.find("tools/call") {
		ops["op-"+strconv.Itoa(o.id)] = o
	}
	if len(all) != 4*calls || len(ops) != 4*calls {
		t.Fatalf("%d calls answered, %d operations; want %d", len(all), len(ops), 4*calls)
	}
	used := map[string]bool{}
	for _, s := range all {
		o := ops[s.got]
		if o == nil || used[s.got] {
			t.Errorf("%s: the server saw %q, no operation of its own", s.sent, s.got)
			continue
		}
		used[s.got] = true
		hw, _ := o.op.HTTPContext.Value(httpWhoKey{}).(string)
		if o.op.Principal != s.who || o.op.Meta["traceparent"] != s.sent || hw != s.who {
			t.Errorf("%s: its operation is principal %q, traceparent %v, HTTP request of %q", s.sent, o.op.Principal, o.op.Meta["traceparent"], hw)
		}
	}
}

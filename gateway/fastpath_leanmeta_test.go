package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// leanSecret marks what a client's _meta holds of its own (its info, a
// capability go-sdk does not know) and the gateway sends no server: it
// must reach neither the server, nor the gateway's logs and audit records.
const leanSecret = "cl1ent-0nly-s3cret"

// upstreamRecorder passes requests on to target and records each
// tools/call the gateway sends it: its body and its header, as sent.
type upstreamRecorder struct {
	mu    sync.Mutex
	calls []string
	metas []string
}

func recordUpstream(t *testing.T, target string) (string, *upstreamRecorder) {
	u, _ := url.Parse(target)
	rp := httputil.NewSingleHostReverseProxy(u)
	rec := &upstreamRecorder{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Meta json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
			var hdr bytes.Buffer
			_ = r.Header.Write(&hdr)
			rec.mu.Lock()
			rec.calls = append(rec.calls, hdr.String()+"\n"+string(body))
			rec.metas = append(rec.metas, string(msg.Params.Meta))
			rec.mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + u.Path, rec
}

func (r *upstreamRecorder) take() (calls, metas []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	calls, metas = r.calls, r.metas
	r.calls, r.metas = nil, nil
	return calls, metas
}

// TestFastPathLeanMetaUpstream: a 2026-07-28 client's call through the
// gateway, answered on the fast path directly (its params made from the
// members read, or decoded), by the request's lean session, or by a
// session that reads the _meta itself, reaches the server with the _meta
// the gateway without the fast path sends, byte for byte: the protocol
// version, the client's capabilities as the gateway relays them, its
// trace context and log level, and not the client's info (the gateway's
// own client names itself) nor what go-sdk does not read of its
// capabilities. The client's info reaches no server, log or audit record
// on either path. Which path each call took is checked.
func TestFastPathLeanMetaUpstream(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "up", Era: testserver.Modern}), testserver.Stateless())
	info := `"io.modelcontextprotocol/clientInfo":{"name":"` + leanSecret + `","title":"` + leanSecret + `","version":"` + leanSecret + `"}`
	caps := `"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"x-` + leanSecret + `":{"k":"` + leanSecret + `"}}`
	type path int
	const (
		direct        path = iota // directParams
		directDecoded             // readDirect's decoding of the lean params
		leanSession               // the lean session reads the lean params
		sdkSession                // not lean (its capabilities name a member twice): go-sdk's session reads the _meta
	)
	cases := []struct {
		name string
		body string
		path path
		meta map[string]any // the _meta the server gets, but the gateway's own client's info
	}{
		{"direct", leanCall("1", `"up_whoami"`, `{}`, info+","+caps), direct,
			map[string]any{"io.modelcontextprotocol/protocolVersion": v0728, "io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}}},
		{"direct decoded", leanCall("2", `"up_whoami"`, `{}`, `"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","x-trace":[1,"a"],"progressToken":"p1","io.modelcontextprotocol/logLevel":"debug",`+info+","+caps), directDecoded,
			map[string]any{"io.modelcontextprotocol/protocolVersion": v0728, "io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
				"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "x-trace": []any{1.0, "a"}, "io.modelcontextprotocol/logLevel": "debug"}},
		{"lean session", strings.Replace(leanCall("3", `"up_whoami"`, `{}`, `"x-trace":"s",`+info+","+caps), `"arguments"`, `"extra":{"k":1},"arguments"`, 1), leanSession,
			map[string]any{"io.modelcontextprotocol/protocolVersion": v0728, "io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}, "x-trace": "s"}},
		{"sdk session", leanCall("4", `"up_whoami"`, `{}`, info+`,"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"elicitation":{"form":{}}}`), sdkSession,
			map[string]any{"io.modelcontextprotocol/protocolVersion": v0728, "io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}}},
	}

	type side struct {
		g         *Gateway
		url       string
		rec       *upstreamRecorder
		logs, aud *lockedBuffer
	}
	start := func(slowOnly bool) side {
		target, rec := recordUpstream(t, up.URL)
		s := side{rec: rec, logs: &lockedBuffer{}, aud: &lockedBuffer{}}
		s.g, s.url = startGateway(t, []Server{{Name: "up", Target: target}}, &Options{
			slowPathOnly: slowOnly,
			Prefix:       mcpadapter.PrefixAlways,
			Logger:       slog.New(slog.NewTextHandler(s.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			AuditLog:     slog.New(slog.NewJSONHandler(s.aud, nil)),
			AuditPayload: func(string, string, string) bool { return true },
		})
		return s
	}
	fast, slow := start(false), start(true)

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fc := fastCase{name: c.name, body: c.body, header: map[string]string{"Mcp-Name": "up_whoami"}}
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(c.body))
			for k, v := range fastHeaders("up_whoami") {
				req.Header.Set(k, v)
			}
			f := fast.g.fastRequestOf(req)
			if f == nil {
				t.Fatalf("the fast path does not take %s", c.body)
			}
			_, decoded := f.directParams()
			var took path
			switch {
			case f.call != nil && decoded:
				took = direct
			case f.call != nil:
				took = directDecoded
			case f.init != nil:
				took = leanSession
			default:
				took = sdkSession
			}
			if took != c.path {
				t.Fatalf("took path %d, want %d", took, c.path)
			}

			var metas [2][]string
			for i, s := range []side{fast, slow} {
				a := sendCase(t, s.url, fc)
				if a.Status != http.StatusOK || !strings.Contains(a.Raw, `"structuredContent"`) {
					t.Fatalf("side %d answered %d %s", i, a.Status, a.Raw)
				}
				calls, m := s.rec.take()
				if len(calls) != 1 {
					t.Fatalf("side %d: the server got %d calls, want 1", i, len(calls))
				}
				if strings.Contains(calls[0], leanSecret) {
					t.Errorf("side %d: the server got the client's own _meta:\n%s", i, calls[0])
				}
				var got map[string]any
				if err := json.Unmarshal([]byte(m[0]), &got); err != nil {
					t.Fatalf("side %d: the server got the _meta %s", i, m[0])
				}
				gwInfo, _ := got["io.modelcontextprotocol/clientInfo"].(map[string]any)
				if gwInfo == nil || gwInfo["name"] == leanSecret {
					t.Errorf("side %d: the server got the client info %v", i, got["io.modelcontextprotocol/clientInfo"])
				}
				delete(got, "io.modelcontextprotocol/clientInfo")
				// The gateway's client asks for the call's progress with a
				// token of its own when the client asked for it.
				if tok, asked := got["progressToken"]; asked != strings.Contains(c.body, `"progressToken"`) || tok == "p1" {
					t.Errorf("side %d: the server got the progress token %v", i, tok)
				}
				delete(got, "progressToken")
				if !reflect.DeepEqual(got, c.meta) {
					t.Errorf("side %d: the server got the _meta %s, want (but the gateway's client info) %v", i, m[0], c.meta)
				}
				metas[i] = m
			}
			if !reflect.DeepEqual(metas[0], metas[1]) {
				t.Errorf("the server got the _meta\n%q\non the fast path, and\n%q\nwithout it", metas[0], metas[1])
			}
		})
	}
	for i, s := range []side{fast, slow} {
		if strings.Contains(s.logs.String(), leanSecret) || strings.Contains(s.aud.String(), leanSecret) {
			t.Errorf("side %d: the client's info is in the gateway's logs or audit records:\n%s\n%s", i, s.logs, s.aud)
		}
		if n := strings.Count(s.aud.String(), "\n"); n != len(cases) {
			t.Errorf("side %d: %d audit records, want %d:\n%s", i, n, len(cases), s.aud)
		}
	}
}

// TestFastPathLeanSessionParams: the session of a lean request that is
// not direct (a member besides name, arguments and _meta) reads the
// params without the _meta members the fast path took (the protocol
// version, the client's info and capabilities, which its session holds),
// as the receiving middleware outside the gateway's sees them; a request
// that is not lean (a member named twice in its capabilities) has its
// session read them all, which shows the recorder sees what is there.
func TestFastPathLeanSessionParams(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "up", Era: testserver.Modern}), testserver.Stateless())
	g, u := startGateway(t, []Server{{Name: "up", Target: up.URL}}, &Options{Prefix: mcpadapter.PrefixAlways})
	var mu sync.Mutex
	var seen []string
	g.server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && method == "tools/call" {
				keys := slices.Sorted(maps.Keys(p.Meta))
				mu.Lock()
				seen = append(seen, strings.Join(keys, " "))
				mu.Unlock()
			}
			return next(ctx, method, req)
		}
	})
	info := `"io.modelcontextprotocol/clientInfo":{"name":"` + leanSecret + `","version":"1"}`
	extra := func(body string) string {
		return strings.Replace(body, `"arguments"`, `"extra":{"k":1},"arguments"`, 1)
	}
	for _, c := range []struct {
		name, body string
		lean       bool
		want       string // the _meta's keys the session reads
	}{
		{"lean", extra(leanCall("1", `"up_whoami"`, `{}`, `"x-trace":"s",`+info+`,"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}`)), true,
			"x-trace"},
		{"not lean", extra(leanCall("2", `"up_whoami"`, `{}`, `"x-trace":"s",`+info+`,"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"elicitation":{"form":{}}}`)), false,
			"io.modelcontextprotocol/clientCapabilities io.modelcontextprotocol/clientInfo io.modelcontextprotocol/protocolVersion x-trace"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(c.body))
			for k, v := range fastHeaders("up_whoami") {
				req.Header.Set(k, v)
			}
			if f := g.fastRequestOf(req); f == nil || f.call != nil || (f.init != nil) != c.lean {
				t.Fatalf("the fast path took it: %v; want it handed to a session, lean: %v", f != nil, c.lean)
			}
			a := sendCase(t, u, fastCase{name: c.name, body: c.body, header: map[string]string{"Mcp-Name": "up_whoami"}})
			if a.Status != http.StatusOK || !strings.Contains(a.Raw, `"structuredContent"`) {
				t.Fatalf("answered %d %s", a.Status, a.Raw)
			}
			mu.Lock()
			got := seen
			seen = nil
			mu.Unlock()
			if len(got) != 1 || got[0] != c.want {
				t.Errorf("the session read the _meta keys %q, want [%q]", got, c.want)
			}
		})
	}
}

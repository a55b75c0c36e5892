//lint:file-ignore SA1019 a request's log level (deprecated in 2026-07-28, alive in its window) is read as go-sdk reads it

package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	segjson "github.com/segmentio/encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzFastRequest feeds the fast path's request reading arbitrary bodies
// and tool names: it never panics, reads a body as go-sdk's
// jsonrpc.DecodeMessage does when it reads it at all, always puts the body
// back as it was,
// and takes only a request go-sdk reads as one tools/call with an id whose
// name is the Mcp-Name header and whose _meta's protocol version is the
// Mcp-Protocol-Version header; the log level its lean session takes is
// the one go-sdk's session reads in its _meta.
func FuzzFastRequest(f *testing.F) {
	for _, c := range fastCases() {
		f.Add(c.body, fastHeaders("up_echo")["Mcp-Name"])
	}
	f.Add(fastCall("1", `"a"`, `{}`), "a")
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "a")
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{ "x" : [1, 2.50, "\u003c"] }}}`, "a")
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":null,"name":"a"}}`, "a")
	g := &Gateway{cat: newCatalog(nil)}
	f.Fuzz(func(t *testing.T, body, name string) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		for k, v := range fastHeaders(name) {
			r.Header.Set(k, v)
		}
		if req, ok := readEnvelope([]byte(body)); ok {
			msg, err := jsonrpc.DecodeMessage([]byte(body))
			sdk, isReq := msg.(*jsonrpc.Request)
			if err != nil || !isReq || sdk.ID != req.ID || sdk.Method != req.Method || !bytes.Equal(sdk.Params, req.Params) {
				t.Fatalf("read %q as %v %q %s; go-sdk reads %#v, %v", body, req.ID.Raw(), req.Method, req.Params, msg, err)
			}
		}
		if f := parseFast([]byte(body)); f != nil {
			if p, ok := f.metalessParams(); ok {
				sdk, ok := decodeAsSDK[mcp.CallToolParamsRaw](f.msg.Params)
				if !ok || !reflect.DeepEqual(p, sdk) {
					t.Fatalf("read %q's params as %#v; go-sdk reads %#v (%v)", body, p, sdk, ok)
				}
			}
		}
		fr := g.fastRequestOf(r)
		if b, _ := io.ReadAll(r.Body); string(b) != body {
			t.Fatalf("the body put back is %q, want %q", b, body)
		}
		if fr == nil {
			return
		}
		msg, err := jsonrpc.DecodeMessage([]byte(body))
		req, ok := msg.(*jsonrpc.Request)
		if err != nil || !ok || !req.IsCall() || req.Method != "tools/call" {
			t.Fatalf("took %q, which go-sdk reads as %#v, %v", body, msg, err)
		}
		// The params as go-sdk's transport decodes them (extractName,
		// extractRequestMeta): a request it cannot decode is its to refuse.
		var p mcp.CallToolParams
		if _, err := segjson.Parse(req.Params, &p, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
			t.Fatalf("took %q, whose params go-sdk cannot decode: %v", body, err)
		}
		if fr.init != nil {
			checkLean(t, body, p.Meta, fr.init)
			checkLeanParams(t, body, req.Params, fr)
		}
		if p.Name != name || fr.name != name {
			t.Fatalf("took %q for the Mcp-Name %q", body, name)
		}
		if v, _ := p.Meta[mcp.MetaKeyProtocolVersion].(string); v != v0728 {
			t.Fatalf("took %q with the _meta protocol version %q", body, v)
		}
		if fr.init != nil {
			var want mcp.LoggingLevel
			if raw, ok := p.Meta[mcp.MetaKeyLogLevel]; ok && raw != nil {
				if b, err := json.Marshal(raw); err == nil && json.Unmarshal(b, &want) != nil {
					want = ""
				}
			}
			if got := fr.logLevel(); got != want {
				t.Fatalf("took %q with the log level %q; go-sdk reads %q", body, got, want)
			}
		}
	})
}

// checkLeanParams fails t unless fr's params, which its lean session
// reads, are params (a request's, as go-sdk reads them) with the _meta
// members the session took out (leanKeys), and unless the params of a
// direct call made without decoding them (directParams) are what go-sdk's
// decoder reads from them.
func checkLeanParams(t *testing.T, body string, params json.RawMessage, fr *fastRequest) {
	t.Helper()
	want, ok := membersByTokens(params)
	if !ok {
		t.Fatalf("took %q, whose params encoding/json reads no object", body)
	}
	wantMeta, ok := membersByTokens(want["_meta"])
	if !ok {
		t.Fatalf("took %q lean, whose _meta encoding/json reads no object", body)
	}
	for _, k := range leanKeys {
		delete(wantMeta, k)
	}
	got, ok := membersByTokens(fr.leanParams())
	gotMeta, metaOK := membersByTokens(got["_meta"])
	delete(got, "_meta")
	delete(want, "_meta")
	eq := func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }
	if !ok || !metaOK || !maps.EqualFunc(got, want, eq) || !maps.EqualFunc(gotMeta, wantMeta, eq) {
		t.Fatalf("took %q lean with the params %s", body, fr.leanParams())
	}
	if !fr.plain {
		return
	}
	if direct, ok := fr.directParams(); ok {
		sdk, ok := decodeAsSDK[mcp.CallToolParamsRaw](fr.leanParams())
		if !ok || !reflect.DeepEqual(direct, sdk) {
			t.Fatalf("took %q direct with the params %#v; go-sdk reads %#v (%v)", body, direct, sdk, ok)
		}
	}
}

// checkLean fails t unless init, the session's initialize params the fast
// path read from a request's _meta, are what go-sdk's session reads from
// meta, the request's _meta as go-sdk decodes it (validateRequestMeta:
// each value marshaled again and decoded).
func checkLean(t *testing.T, body string, meta mcp.Meta, init *mcp.InitializeParams) {
	t.Helper()
	remarshal := func(key string, v any) bool {
		raw, ok := meta[key]
		if !ok || raw == nil {
			return false
		}
		data, err := json.Marshal(raw)
		if err != nil {
			return false
		}
		_, err = segjson.Parse(data, v, segjson.DontMatchCaseInsensitiveStructFields)
		return err == nil
	}
	var caps capabilitiesV2
	if !remarshal(mcp.MetaKeyClientCapabilities, &caps) {
		t.Fatalf("read %q once, whose capabilities go-sdk refuses", body)
	}
	var info *mcp.Implementation
	if _, ok := meta[mcp.MetaKeyClientInfo]; ok {
		info = new(mcp.Implementation)
		if !remarshal(mcp.MetaKeyClientInfo, info) {
			t.Fatalf("read %q once, whose client info go-sdk refuses", body)
		}
	}
	want := &mcp.InitializeParams{ProtocolVersion: v0728, ClientInfo: info, Capabilities: caps.v1()}
	if !reflect.DeepEqual(init, want) {
		got, _ := json.Marshal(init)
		sdk, _ := json.Marshal(want)
		t.Fatalf("read %q once as %s; go-sdk reads %s", body, got, sdk)
	}
}

// FuzzMetaString: metaString reads a _meta value, valid JSON, as
// json.Unmarshal reads it into a string.
func FuzzMetaString(f *testing.F) {
	for _, s := range []string{`"2026-07-28"`, `""`, `null`, `1`, `{}`, `[]`, `true`, `"a\"b"`, `"\u00e9"`, `"é"`, `"\ud800"`, `"\ud83d\ude00"`, `"a\/b"`, " \"x\" "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) || !utf8.ValidString(raw) {
			return // the fast path reads valid UTF-8 JSON only (readEnvelope)
		}
		v, ok := membersByTokens([]byte(`{"k":` + raw + `}`))
		if !ok {
			return
		}
		got, gotOK := metaString(v, "k")
		var want string
		wantOK := json.Unmarshal(v["k"], &want) == nil
		if gotOK != wantOK || got != want {
			t.Fatalf("metaString(%q) = %q, %v; json.Unmarshal reads %q, %v", raw, got, gotOK, want, wantOK)
		}
	})
}

// FuzzIsIntID holds isIntID to the rule it states, as a regular
// expression.
func FuzzIsIntID(f *testing.F) {
	rule := regexp.MustCompile(`^-?(0|[1-9][0-9]{0,14})$`)
	for _, s := range []string{"0", "-0", "00", "1", "-1", "--1", "+1", "123456789012345", "1234567890123456", "-999999999999999", "1.0", "1e3", "", "-", " 1", "1\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isIntID(s), rule.MatchString(s); got != want {
			t.Fatalf("isIntID(%q) = %v, want %v", s, got, want)
		}
	})
}

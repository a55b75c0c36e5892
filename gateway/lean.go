//lint:file-ignore SA1019 a 2026-07-28 request's capabilities hold roots, deprecated in 2026-07-28 but alive in its window, as go-sdk reads them

package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"

	segjson "github.com/segmentio/encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A request on the fast path at the protocol version the gateway's server
// speaks is handed to its one-request session made initialized, with the
// client's protocol version, info and capabilities taken out of the
// params' _meta: go-sdk's session then reads them from the session's
// InitializeParams, which the fast path decoded once, instead of decoding
// the _meta twice more (validateRequestMeta's remarshal of each value,
// and the params' own decoding). What the session does differently for
// such a request is done by leanMeta: the members are put back in the
// params' _meta before the gateway's code reads them (the info and
// capabilities only for Options.Telemetry, the one reader of a call's
// whole _meta; the rest reads them from the session, as go-sdk's
// ServerRequest.ClientCapabilities falls back to), and the result names
// the server in its _meta (annotateServerInfo), as go-sdk does for a
// request that names its version. The log level go-sdk would also read
// there is the session's (ServerSessionState.LogLevel, which
// ServerSession.Log falls back to: answerFast). TestFastPathDifferential
// and TestFastPathLeanTelemetry hold these to go-sdk's answers.

// lean sets f.init when f's _meta reads as go-sdk reads it:
// the protocol version the gateway's server speaks, the client's
// capabilities, and its info if any. Anything else leaves f as it is, for
// go-sdk's session to read (and refuse, if it must).
func (f *fastRequest) lean() {
	if v, _ := metaString(f.meta, mcp.MetaKeyProtocolVersion); v != modernVersion {
		return
	}
	caps, ok := metaValue[capabilitiesV2](f.meta, mcp.MetaKeyClientCapabilities)
	if !ok {
		return
	}
	var info *mcp.Implementation
	if _, present := f.meta[mcp.MetaKeyClientInfo]; present {
		if info, ok = metaValue[mcp.Implementation](f.meta, mcp.MetaKeyClientInfo); !ok {
			return
		}
	}
	f.taken = map[string]json.RawMessage{mcp.MetaKeyClientCapabilities: f.meta[mcp.MetaKeyClientCapabilities]}
	if info != nil {
		f.taken[mcp.MetaKeyClientInfo] = f.meta[mcp.MetaKeyClientInfo]
	}
	f.init = &mcp.InitializeParams{ProtocolVersion: modernVersion, ClientInfo: info, Capabilities: caps.v1()}
}

// leanParams returns the params the lean session of f reads: f's params
// without the _meta members f.init was read from. They are made when first
// asked for: a direct call (direct.go) is answered from the members the
// fast path has read, and its session reads no params.
func (f *fastRequest) leanParams() json.RawMessage {
	if f.params == nil {
		f.params = withoutMetaKeys(f.pm, f.meta, leanKeys...)
	}
	return f.params
}

// leanKeys are the members of a lean request's _meta its session reads
// from its InitializeParams.
var leanKeys = []string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities}

// capabilitiesV2 is the client's capabilities as a 2026-07-28 request's
// _meta writes them (go-sdk's clientCapabilitiesV2).
type capabilitiesV2 struct {
	mcp.ClientCapabilities
	Roots *mcp.RootCapabilities `json:"roots,omitempty"`
}

// v1 returns c as go-sdk's session holds a client's capabilities.
func (c *capabilitiesV2) v1() *mcp.ClientCapabilities {
	caps := c.ClientCapabilities
	caps.RootsV2 = c.Roots
	if caps.RootsV2 != nil {
		caps.Roots = *caps.RootsV2
	}
	return &caps
}

// metaValue decodes the value at key in meta as go-sdk's session decodes
// it (segmentio's decoder, struct fields matched by their exact names); a
// missing or null value is not one, and neither is one where an object
// names a member twice: go-sdk's session reads the _meta into maps first
// (the last of the members named alike wins whole), and a decoder into a
// struct merges them.
func metaValue[T any](meta map[string]json.RawMessage, key string) (*T, bool) {
	raw, ok := meta[key]
	if !ok || bytes.Equal(raw, []byte("null")) || !uniqueMembers(raw) {
		return nil, false
	}
	return decodeAsSDK[T](raw)
}

// decodeAsSDK decodes raw as go-sdk decodes a message's parts (segmentio's
// decoder, struct fields matched by their exact names).
func decodeAsSDK[T any](raw json.RawMessage) (*T, bool) {
	v := new(T)
	rest, err := segjson.Parse(raw, v, segjson.DontMatchCaseInsensitiveStructFields)
	if err != nil || len(bytes.TrimLeft(rest, " \t\r\n")) != 0 {
		return nil, false
	}
	return v, true
}

// withoutMetaKeys returns the params whose members are p and whose _meta's
// members are meta (a JSON object's, both) with keys taken out of its
// _meta; meta is not changed.
func withoutMetaKeys(p, meta map[string]json.RawMessage, keys ...string) json.RawMessage {
	n := 0
	for _, v := range p {
		n += len(v) + 8
	}
	var b bytes.Buffer
	b.Grow(n + 16)
	b.WriteByte('{')
	writeMembers(&b, p, func(k string) bool { return k == "_meta" })
	if len(p) > 1 {
		b.WriteByte(',')
	}
	b.WriteString(`"_meta":{`)
	writeMembers(&b, meta, func(k string) bool { return slices.Contains(keys, k) })
	b.WriteString("}}")
	return b.Bytes()
}

// writeMembers writes the members of m but those skip names,
// comma-separated.
func writeMembers(b *bytes.Buffer, m map[string]json.RawMessage, skip func(string) bool) {
	first := true
	for k, v := range m {
		if skip(k) {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		writeKey(b, k)
		b.WriteByte(':')
		b.Write(v)
	}
}

// writeKey writes k as json.Marshal writes a string.
func writeKey(b *bytes.Buffer, k string) {
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			name, _ := json.Marshal(k)
			b.Write(name)
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(k)
	b.WriteByte('"')
}

// leanMeta does for a request of a lean one-request session what go-sdk's
// session does for a request that names its protocol version (see above).
func (g *Gateway) leanMeta(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		one, _ := ctx.Value(oneRequestKey{}).(*oneRequest)
		if one == nil || one.version == "" {
			return next(ctx, method, req)
		}
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p != nil {
			if p.Meta == nil {
				p.Meta = mcp.Meta{}
			}
			p.Meta[mcp.MetaKeyProtocolVersion] = one.version
			if g.opts.Telemetry != nil {
				for k, raw := range one.meta {
					var v any
					if _, err := segjson.Parse(raw, &v, segjson.DontMatchCaseInsensitiveStructFields); err == nil {
						p.Meta[k] = v
					}
				}
			}
		}
		res, err := next(ctx, method, req)
		if err == nil && res != nil {
			m := res.GetMeta()
			if m == nil {
				m = map[string]any{}
			}
			if _, ok := m[mcp.MetaKeyServerInfo]; !ok {
				m[mcp.MetaKeyServerInfo] = g.impl
				res.SetMeta(m)
			}
		}
		return res, err
	}
}

package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpadapter/mcpadapter/internal/jsonscan"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxCopiedBody bounds what of a POST's body the gateway keeps for the
// ids of the requests in it (Options.Telemetry): a request's id usually
// comes before its params, and is found in a body cut there.
const maxCopiedBody = 16 << 10

// maxStdioIDs bounds the ids of stdio requests read and not yet handled
// that the gateway keeps (Options.Telemetry).
const maxStdioIDs = 1024

// httpRequest is what the operations of the requests an HTTP request
// carries learn of it (Options.Telemetry).
type httpRequest struct {
	ctx    context.Context
	remote string    // http.Request.RemoteAddr
	body   *bodyCopy // nil but for a POST
}

// bodyCopy is an HTTP request's body that keeps the first maxCopiedBody
// bytes read from it, to find the id of a request in it.
type bodyCopy struct {
	io.ReadCloser
	mu     sync.Mutex
	buf    []byte
	read   int  // bytes read in all
	eof    bool // the body was read to its end
	parsed bool
	msgs   []rpcMessage
}

// rpcMessage is the method and id (as text) of a request in a body.
type rpcMessage struct{ method, id string }

func (b *bodyCopy) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.mu.Lock()
	if n > 0 {
		if room := maxCopiedBody - len(b.buf); room > 0 {
			b.buf = append(b.buf, p[:min(n, room)]...)
		}
		b.read += n
	}
	if err == io.EOF {
		b.eof = true
	}
	b.mu.Unlock()
	return n, err
}

// requestID returns the id of the request of method in the body: "" when
// it has no such request, or more than one (a batch), or the part kept
// ends before the id.
func (b *bodyCopy) requestID(method string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.parsed {
		if b.eof && b.read == len(b.buf) {
			b.msgs = decodeMessages(b.buf)
		} else {
			b.msgs = scanMessage(b.buf)
		}
		b.parsed = true
	}
	id := ""
	for _, m := range b.msgs {
		if m.method == method {
			if id != "" {
				return ""
			}
			id = m.id
		}
	}
	return id
}

// decodeMessages returns the requests (with an id) of a whole body, a
// JSON-RPC message or batch, decoded as go-sdk decodes them: their ids are
// those go-sdk answers with (a number with a fraction or an exponent made
// an integer, the last of a member written twice).
func decodeMessages(body []byte) []rpcMessage {
	raws := []json.RawMessage{body}
	if i := jsonscan.Space(body, 0); i < len(body) && body[i] == '[' {
		raws = nil
		if json.Unmarshal(body, &raws) != nil {
			return nil
		}
	}
	var out []rpcMessage
	for _, raw := range raws {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return nil // go-sdk refuses the body whole
		}
		if r, ok := msg.(*jsonrpc.Request); ok && r.IsCall() {
			if id := rpcIDText(r.ID); id != "" {
				out = append(out, rpcMessage{r.Method, id})
			}
		}
	}
	return out
}

// scanMessage returns the request (with an id) of the start of a JSON-RPC
// message, a body cut at maxCopiedBody: its id and method as go-sdk reads
// them (the last of a member written twice) when both are in the part
// kept; a value the cut may have shortened is not taken.
func scanMessage(body []byte) []rpcMessage {
	var m rpcMessage
	jsonscan.Members(body, 0, func(k, kend, v, vend int) bool {
		if vend >= len(body) {
			return false
		}
		switch string(body[k:kend]) {
		case `"id"`:
			m.id = idText(body[v:vend])
		case `"method"`:
			m.method = ""
			_ = json.Unmarshal(body[v:vend], &m.method)
		}
		return true
	})
	if m.id == "" || m.method == "" {
		return nil
	}
	return []rpcMessage{m}
}

// idText returns a JSON-RPC id as text, as go-sdk reads it: a string's
// characters, a number made an integer (go-sdk's jsonrpc.MakeID), cut at
// maxTelemetryURI bytes; "" for anything else.
func idText(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		return ""
	}
	return rpcIDText(id)
}

// rpcIDText returns a go-sdk request id as text, as idText does.
func rpcIDText(id jsonrpc.ID) string {
	switch v := id.Raw().(type) {
	case string:
		return cutURI(v)
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return ""
}

// withHTTPContext records the context and remote address of r, an HTTP
// request about to be handled, and the ids of the requests in its body,
// for the operations of the requests it carries
// (ServerOperation.HTTPContext, RemoteAddr, RequestID), until the
// returned function is called. It records nothing without
// Options.Telemetry or a server whose credential is exchanged per
// principal (which needs only the context), and copies no body without
// Options.Telemetry.
func (g *Gateway) withHTTPContext(r *http.Request) (done func()) {
	if (g.opts.Telemetry == nil && !g.exchanges.Load()) || r.Header == nil {
		return func() {}
	}
	hr := &httpRequest{ctx: r.Context(), remote: r.RemoteAddr}
	if g.opts.Telemetry != nil && r.Method == http.MethodPost && r.Body != nil {
		hr.body = &bodyCopy{ReadCloser: r.Body}
		r.Body = hr.body
	}
	k := headerKey(r.Header)
	g.httpCtx.Store(k, hr)
	return func() { g.httpCtx.Delete(k) }
}

// stdioIDs holds the ids of the requests read from stdio clients, by the
// RequestExtra each is handed to its handler with, until the handler
// takes it; the oldest are dropped past maxStdioIDs (a request go-sdk
// refused before its handler ran).
type stdioIDs struct {
	mu   sync.Mutex
	ids  map[*mcp.RequestExtra]string
	ring []*mcp.RequestExtra
	next int
}

// put gives r an Extra, if it has none, and records its id there.
func (s *stdioIDs) put(r *jsonrpc.Request) {
	if !r.IsCall() || strings.HasPrefix(r.Method, "notifications/") {
		return
	}
	ex, _ := r.Extra.(*mcp.RequestExtra)
	if ex == nil {
		if r.Extra != nil {
			return
		}
		ex = &mcp.RequestExtra{}
		r.Extra = ex
	}
	id := rpcIDText(r.ID)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ids == nil {
		s.ids, s.ring = make(map[*mcp.RequestExtra]string), make([]*mcp.RequestExtra, maxStdioIDs)
	}
	if old := s.ring[s.next]; old != nil {
		delete(s.ids, old)
	}
	s.ring[s.next], s.next = ex, (s.next+1)%maxStdioIDs
	s.ids[ex] = id
}

// take returns the id recorded for ex and forgets it.
func (s *stdioIDs) take(ex *mcp.RequestExtra) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.ids[ex]
	delete(s.ids, ex)
	return id
}

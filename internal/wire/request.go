package wire

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// RequestStatus is what the wire layer learns about one request on its way
// through go-sdk: the HTTP status of the request's own POST (whether the
// server answered this very request with, say, 404 for an expired
// session, which proves the server did not run it), the authorization
// challenge of a 401 or 403, and, when asked with KeepResult, the result
// of the request's response exactly as the server wrote it.
type RequestStatus struct {
	status atomic.Int32
	keep   string // the method whose result to keep; set before sending

	mu        sync.Mutex
	id        jsonrpc.ID      // the id the request was sent with
	result    json.RawMessage // the response's result, from a connection
	message   *spool          // the whole response, from an HTTP body
	challenge []string        // WWW-Authenticate of the latest 401 or 403
	forget    func()          // ends the wait for the response

	notice notice // go-sdk's cancellation of the request (notice.go)
}

// Status returns the HTTP status of the latest POST made for the request,
// or 0 if none was answered.
func (r *RequestStatus) Status() int {
	return int(r.status.Load())
}

// Challenge returns the WWW-Authenticate header values of the latest 401
// or 403 answer to the request's POST, or nil.
func (r *RequestStatus) Challenge() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.challenge
}

// KeepResult asks for the result of the response to the request, if its
// method is method (go-sdk may send other messages with the request's
// context, such as its cancellation). Call it before the request is sent.
func (r *RequestStatus) KeepResult(method string) {
	r.keep = method
}

// Result returns the result of the response to the request, byte for byte
// as the server wrote it (go-sdk decodes results into maps, which loses
// member order and the precision of large numbers). ok is false when no
// such response was seen: the request was not tracked with KeepResult,
// the response was an error, or it came where the wire layer does not
// look (a streamable HTTP stream resumed under another context).
func (r *RequestStatus) Result() (result json.RawMessage, ok bool) {
	if r == nil {
		return nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.result != nil {
		return r.result, true
	}
	if r.message == nil {
		return nil, false
	}
	// From an HTTP body: the message must answer this request.
	var v [2][]byte
	if !members(r.message.bytes(), []string{"id", "result"}, v[:]) || !SameID(v[0], r.id) {
		return nil, false
	}
	r.result, r.message = v[1], nil
	return r.result, true
}

// Done ends the request: a response that arrives later is not kept.
func (r *RequestStatus) Done() {
	r.mu.Lock()
	forget := r.forget
	r.forget = nil
	r.mu.Unlock()
	if forget != nil {
		forget()
	}
}

// keeps reports whether r wants the result of a request for method.
func (r *RequestStatus) keeps(method string) bool {
	return r != nil && r.keep != "" && r.keep == method
}

// sent records that the request went out with id, forgetting any earlier
// attempt's response (go-sdk sends a multi-round-trip call again with the
// same context). forget, if set, ends the wait for the response.
func (r *RequestStatus) sent(id jsonrpc.ID, forget func()) {
	r.mu.Lock()
	old := r.forget
	r.id, r.result, r.message, r.forget = id, nil, nil, forget
	r.mu.Unlock()
	if old != nil {
		old()
	}
}

// answered records the result of the response.
func (r *RequestStatus) answered(result json.RawMessage) {
	r.mu.Lock()
	r.result, r.message = result, nil
	r.mu.Unlock()
}

// answeredWith records a response message read from an HTTP body; Result
// checks its id and takes its result out when asked.
func (r *RequestStatus) answeredWith(msg *spool) {
	r.mu.Lock()
	r.result, r.message = nil, msg
	r.mu.Unlock()
}

// httpAnswer records the status of the request's POST, and the challenge
// of a 401 or 403.
func (r *RequestStatus) httpAnswer(resp *http.Response) {
	r.status.Store(int32(resp.StatusCode))
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		r.mu.Lock()
		r.challenge = resp.Header.Values("WWW-Authenticate")
		r.mu.Unlock()
	}
}

// sameID reports whether the JSON text raw is the id id.
func SameID(raw []byte, id jsonrpc.ID) bool {
	if n, ok := intID(raw); ok {
		// The usual id, compared without making an ID of it.
		v, isInt := id.Raw().(int64)
		return isInt && v == n
	}
	return id.IsValid() && parseID(raw) == id
}

// parseID returns the id whose JSON text is raw, or an invalid id.
func parseID(raw []byte) jsonrpc.ID {
	if n, ok := intID(raw); ok {
		id, _ := jsonrpc.MakeID(float64(n)) // the usual id, without a decoder
		return id
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return jsonrpc.ID{}
	}
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		return jsonrpc.ID{}
	}
	return id
}

// intID reads raw as an integer id that a float64 holds exactly, as a
// JSON decoder would read it into an ID.
func intID(raw []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return n, err == nil && n >= -1<<53 && n <= 1<<53
}

type requestStatusKey struct{}

// callerReadsKey marks a request whose caller reads its response itself.
type callerReadsKey struct{}

// CallerReads returns ctx marked for requests whose caller reads the
// response to its end itself, on its own goroutine, and bounds it (the
// HTTP fast path): a Tap still records the response's status, but neither
// observes nor keeps its messages unless tracing, nor bounds its body, nor
// lets the request outlive ctx.
func CallerReads(ctx context.Context) context.Context {
	return context.WithValue(ctx, callerReadsKey{}, true)
}

// TrackRequest returns a context carrying a new RequestStatus, which the
// wire layer fills in for the messages and POSTs made with that context.
// It rides on the context because go-sdk stands between the caller and
// the connection and carries nothing else of the caller's down to it.
// Call Done on it when the request has returned.
func TrackRequest(ctx context.Context) (context.Context, *RequestStatus) {
	rs := &RequestStatus{}
	return context.WithValue(ctx, requestStatusKey{}, rs), rs
}

// Tracked reports whether ctx carries a RequestStatus (TrackRequest): the
// request is one the engine sends itself (engine.Send), not one a program
// makes on go-sdk's session.
func Tracked(ctx context.Context) bool { return requestStatus(ctx) != nil }

// Untracked returns ctx without the RequestStatus it carries, for code
// of the caller's that runs inside a request (a handler answering the
// questions of a 2026-07-28 round, with the request's context): a
// request that code makes is its own, neither one the engine sends itself
// (Tracked) nor one whose POSTs and answer the outer request's
// RequestStatus records.
func Untracked(ctx context.Context) context.Context {
	if requestStatus(ctx) == nil {
		return ctx
	}
	return context.WithValue(ctx, requestStatusKey{}, (*RequestStatus)(nil))
}

// requestStatus returns the RequestStatus that ctx carries, or nil.
func requestStatus(ctx context.Context) *RequestStatus {
	rs, _ := ctx.Value(requestStatusKey{}).(*RequestStatus)
	return rs
}

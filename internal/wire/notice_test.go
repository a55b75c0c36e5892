package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A request's notice counts once go-sdk's notifications/cancelled of the
// id the request last went out with was written: not a notice of another
// id, not a response, and not an earlier id's once the request went out
// again (a multi-round-trip call).
func TestNoticeOfTheLastIDSent(t *testing.T) {
	ctx, rs := TrackRequest(context.Background())
	write := func(msg jsonrpc.Message) {
		if written := watchMessage(ctx, msg); written != nil {
			written()
		}
	}
	call := func(id int64) *jsonrpc.Request {
		jid, _ := jsonrpc.MakeID(float64(id))
		return &jsonrpc.Request{ID: jid, Method: "tools/call", Params: json.RawMessage(`{"name":"x"}`)}
	}
	notice := func(id string) *jsonrpc.Request {
		return &jsonrpc.Request{Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId":` + id + `,"reason":"x"}`)}
	}
	if rs.NoticeDue() {
		t.Fatal("went out before anything was written")
	}
	var told atomic.Int32
	write(call(1))
	if !rs.NoticeDue() {
		t.Fatal("a call written with the request's context did not go out")
	}
	rs.OnNoticed(func() { told.Add(1) })
	respID, _ := jsonrpc.MakeID(float64(7))
	write(&jsonrpc.Response{ID: respID, Result: json.RawMessage(`{}`)})
	write(notice("2"))
	write(notice(`"1"`))
	if told.Load() != 0 {
		t.Fatal("told by a notice of another id")
	}
	write(call(3)) // sent again
	write(notice("1"))
	if told.Load() != 0 {
		t.Fatal("told by the notice of an earlier id")
	}
	write(notice("3"))
	write(notice("3"))
	if told.Load() != 1 {
		t.Fatalf("told %d times by the notice of the last id, want once", told.Load())
	}
	rs.OnNoticed(func() { told.Add(1) }) // already told: at once
	if told.Load() != 2 {
		t.Fatal("OnNoticed after the notice did not call at once")
	}
	if written := watchMessage(context.Background(), notice("3")); written != nil {
		t.Fatal("a message written without a RequestStatus was watched")
	}
}

// A Tap records go-sdk's POSTs of a request and of its notice (once the
// notice's POST was answered), but not the fast path's (CallerReads), nor
// a POST of a response.
func TestTapRecordsNotice(t *testing.T) {
	var answered atomic.Bool
	tap := &Tap{Observe: true, Base: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		body, _ := io.ReadAll(req.Body)
		if bytes.Contains(body, []byte("notifications/cancelled")) && answered.Load() {
			t.Error("the notice was recorded before its POST was answered")
		}
		return &http.Response{StatusCode: http.StatusAccepted, Body: http.NoBody, Header: http.Header{}, Request: req}, nil
	})}
	post := func(ctx context.Context, body string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:1/mcp", bytes.NewReader([]byte(body)))
		resp, err := tap.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	ctx, rs := TrackRequest(context.Background())
	post(CallerReads(ctx), `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{}}`)
	post(ctx, `{"jsonrpc":"2.0","id":"r","result":{}}`)
	if rs.NoticeDue() {
		t.Fatal("the fast path's POST, or a response, counted as the request")
	}
	post(ctx, `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{}}`)
	rs.OnNoticed(func() { answered.Store(true) })
	post(CallerReads(ctx), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}`)
	if answered.Load() {
		t.Fatal("the fast path's notice counted as go-sdk's")
	}
	post(ctx, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}`)
	if !answered.Load() {
		t.Fatal("go-sdk's answered notice did not count")
	}
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// SettleMiddleware: a request go-sdk's call returned with its context
// live is owed no notice, until the request goes out again; one that
// returned with its context ended still is.
func TestSettleMiddleware(t *testing.T) {
	ctx, rs := TrackRequest(context.Background())
	cctx, cancel := context.WithCancel(ctx)
	send := func(ctx context.Context, id int64, method string) {
		next := func(ctx context.Context, _ string, _ mcp.Request) (mcp.Result, error) {
			if id > 0 {
				jid, _ := jsonrpc.MakeID(float64(id))
				watchMessage(ctx, &jsonrpc.Request{ID: jid, Method: method})
			}
			return nil, ctx.Err()
		}
		_, _ = SettleMiddleware(next)(ctx, method, nil)
	}
	send(cctx, 1, "tools/call")
	if rs.NoticeDue() {
		t.Fatal("a notice is due for a request answered with its context live")
	}
	cancel()
	send(cctx, 3, "tools/call") // returns with its context ended
	if !rs.NoticeDue() {
		t.Fatal("no notice due for a request whose context ended before its call returned")
	}
	send(ctx, 0, "notifications/progress")
	if !rs.NoticeDue() {
		t.Fatal("a notification settled the request")
	}
}

package wire

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"
)

// DrainGrace is how long a POST's response body may still be read after
// the request's context ended, before the request is cancelled. A client
// that closes its idle connections on Close does it again DrainGrace
// later, for the connections the last bodies leave idle.
const DrainGrace = 500 * time.Millisecond

// outlive lets a POST's response body be read to its end after the
// caller's context ends, so that net/http can reuse the connection.
//
// A call's context ends when the call returns, while go-sdk may still be
// reading the last bytes of the response's event stream; a request whose
// context is cancelled then makes net/http close the connection, and the
// next call dials a new one. So the request runs on a context that ends
// DrainGrace after the caller's does, or when the body is closed or read
// to its end, whichever comes first. The caller's cancellation still
// reaches a request that is slow to answer, DrainGrace late.
//
// The returned drain's settle must be called with the response (nil on
// failure); it is nil, and settle does nothing, for other methods.
func outlive(req *http.Request) (*http.Request, *drain) {
	if req.Method != http.MethodPost {
		return req, nil
	}
	parent := req.Context()
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	d := &drain{cancel: cancel}
	d.stop = context.AfterFunc(parent, d.parentEnded)
	return req.WithContext(ctx), d
}

// A drain is one POST's request context, kept alive past its caller's,
// and, once settled, its response body: everything it needs is in one
// allocation, as it is made for every POST.
type drain struct {
	cancel context.CancelFunc // ends the request's context
	stop   func() bool        // stops watching the caller's context

	mu    sync.Mutex
	timer *time.Timer // set when the caller's context ended first
	ended bool

	body io.ReadCloser // the response body, once settled
	once sync.Once
}

// parentEnded starts the grace period, unless the body is done.
func (d *drain) parentEnded() {
	d.mu.Lock()
	if !d.ended {
		d.timer = time.AfterFunc(DrainGrace, d.cancel)
	}
	d.mu.Unlock()
}

// end ends the request's context: the body is closed or read to its end,
// or there is none.
func (d *drain) end() {
	d.stop()
	d.mu.Lock()
	d.ended = true
	if d.timer != nil {
		d.timer.Stop()
	}
	d.mu.Unlock()
	d.cancel()
}

// settle takes the response (nil on failure): its body, if any, ends the
// request's context when it is closed or read to its end.
func (d *drain) settle(resp *http.Response) {
	if d == nil {
		return
	}
	if resp == nil || resp.Body == nil {
		d.end()
		return
	}
	d.body = resp.Body
	resp.Body = d
}

// Read reads the response body; its end ends the request.
func (d *drain) Read(p []byte) (int, error) {
	n, err := d.body.Read(p)
	if err == io.EOF {
		d.once.Do(d.end)
	}
	return n, err
}

// Close closes the response body and ends the request.
func (d *drain) Close() error {
	err := d.body.Close()
	d.once.Do(d.end)
	return err
}

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
// settle must be called with the response (nil on failure).
func outlive(req *http.Request) (_ *http.Request, settle func(*http.Response)) {
	if req.Method != http.MethodPost {
		return req, func(*http.Response) {}
	}
	parent := req.Context()
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	var timer *time.Timer
	var mu sync.Mutex
	stop := context.AfterFunc(parent, func() {
		mu.Lock()
		timer = time.AfterFunc(DrainGrace, cancel)
		mu.Unlock()
	})
	end := func() {
		stop()
		mu.Lock()
		if timer != nil {
			timer.Stop()
		}
		mu.Unlock()
		cancel()
	}
	return req.WithContext(ctx), func(resp *http.Response) {
		if resp == nil || resp.Body == nil {
			end()
			return
		}
		resp.Body = &endingBody{ReadCloser: resp.Body, end: end}
	}
}

// endingBody calls end once, when the body is closed or read to its end.
type endingBody struct {
	io.ReadCloser
	end  func()
	once sync.Once
}

func (b *endingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(b.end)
	}
	return n, err
}

func (b *endingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.end)
	return err
}

package gateway

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// earlyHeaders sends the header of each call still in flight once it has
// run its delay, in the order the calls started, and none of a call that
// ended first; the one timer is set again for the calls that come later.
func TestEarlyHeadersInOrder(t *testing.T) {
	e := &earlyHeaders{delay: 50 * time.Millisecond}
	defer e.close()
	conn := func() (*fastConn, *httptest.ResponseRecorder) {
		w := httptest.NewRecorder()
		return &fastConn{w: w, direct: true, session: true}, w
	}
	headed := func(c *fastConn) bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.headed
	}
	a, aw := conn()
	b, _ := conn()
	c, _ := conn()
	ea := e.add(a)
	eb := e.add(b)
	e.add(c)
	e.remove(eb) // b ended before its delay
	waitFor(t, "the headers of a and c", func() bool { return headed(a) && headed(c) })
	if headed(b) {
		t.Error("the header of a call that ended was sent")
	}
	if aw.Code != 200 || aw.Header().Get("Content-Type") != "text/event-stream" || !aw.Flushed {
		t.Errorf("a's header: %d %v flushed %v", aw.Code, aw.Header(), aw.Flushed)
	}
	e.remove(ea) // ended after its header: nothing to do

	// A call that starts after the queue emptied gets its header too.
	d, _ := conn()
	ed := e.add(d)
	waitFor(t, "the header of d", func() bool { return headed(d) })
	e.remove(ed)

	// A call whose answer is being written gets no header ahead of it.
	f, fw := conn()
	f.writing = true
	ef := e.add(f)
	time.Sleep(3 * e.delay)
	if headed(f) || fw.Code != 200 || fw.Flushed {
		t.Error("a header was sent for a call writing its answer")
	}
	e.remove(ef)
}

// After close, no header is sent early, and no call is queued.
func TestEarlyHeadersClosed(t *testing.T) {
	e := &earlyHeaders{delay: 20 * time.Millisecond}
	w := httptest.NewRecorder()
	c := &fastConn{w: w, direct: true, session: true}
	e.add(c)
	e.close()
	late := e.add(&fastConn{w: httptest.NewRecorder(), direct: true, session: true})
	time.Sleep(5 * e.delay)
	e.mu.Lock()
	queued := e.head != nil || late.queued
	e.mu.Unlock()
	c.mu.Lock()
	headed := c.headed
	c.mu.Unlock()
	if headed || queued {
		t.Errorf("after close: header sent %v, calls queued %v", headed, queued)
	}
	e.remove(late)
}

// afterReturn is a ResponseWriter that records a use after its handler
// returned.
type afterReturn struct {
	*httptest.ResponseRecorder
	mu       sync.Mutex
	returned bool // the handler returned
	answered bool // a body was written
	late     int  // uses after the handler returned, headers after the body
}

func (w *afterReturn) use() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.returned {
		w.late++
	}
}

func (w *afterReturn) Header() http.Header { w.use(); return w.ResponseRecorder.Header() }
func (w *afterReturn) WriteHeader(code int) {
	w.use()
	w.mu.Lock()
	if w.answered {
		w.late++
	}
	w.mu.Unlock()
	w.ResponseRecorder.WriteHeader(code)
}

func (w *afterReturn) Write(b []byte) (int, error) {
	w.use()
	w.mu.Lock()
	w.answered = true
	w.mu.Unlock()
	return w.ResponseRecorder.Write(b)
}
func (w *afterReturn) Flush() { w.use(); w.ResponseRecorder.Flush() }

// Calls that end around the moment their header comes due, some with an
// answer and some without (the gateway closed), while the queue closes:
// nothing touches a response after its handler returned, and an answer
// written is whole and after its header.
func TestEarlyHeadersAtTheMoment(t *testing.T) {
	const calls = 2000
	e := &earlyHeaders{delay: 2 * time.Millisecond}
	var wg sync.WaitGroup
	ws := make([]*afterReturn, calls)
	for i := range calls {
		w := &afterReturn{ResponseRecorder: httptest.NewRecorder()}
		ws[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &fastConn{w: w, direct: true, session: true, req: &jsonrpc.Request{}}
			ec := e.add(c)
			if i%3 == 0 {
				time.Sleep(time.Duration(i%9) * e.delay / 4) // 0 to twice the delay
			} else {
				time.Sleep(e.delay) // when it comes due
			}
			if i%5 != 0 {
				_ = c.writeAnswer(&jsonrpc.Response{}, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
			}
			// answerSessionFast's return.
			e.remove(ec)
			c.mu.Lock()
			c.writing = true
			c.mu.Unlock()
			w.mu.Lock()
			w.returned = true
			w.mu.Unlock()
		}()
		if i == calls*9/10 {
			e.close()
		}
	}
	wg.Wait()
	time.Sleep(4 * e.delay) // a header come due and not sent yet would be now
	for i, w := range ws {
		w.mu.Lock()
		late := w.late
		w.mu.Unlock()
		if late > 0 {
			t.Errorf("call %d: its response was used %d times after its handler returned or its header written after its body", i, late)
		}
		body := w.Body.String()
		if i%5 != 0 && body != "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n" {
			t.Errorf("call %d: answer %q", i, body)
		}
	}
}

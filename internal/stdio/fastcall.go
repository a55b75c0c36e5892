package stdio

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FirstDirectID is the first JSON-RPC id Conn.RoundTrip uses. go-sdk
// numbers its own requests from 1, so the two never meet; the ids stay
// below 10^15, which every JSON number decoder holds exactly.
const FirstDirectID = 100_000_000_000_000

// cancelNotifyTimeout bounds the notifications/cancelled a RoundTrip whose
// context ended writes, as go-sdk bounds its own (5 s).
const cancelNotifyTimeout = 5 * time.Second

// direct holds the requests written by Conn.RoundTrip that await their
// responses. Read hands it every response first; the ones it knows go
// straight to their callers, so go-sdk never sees them.
type direct struct {
	bufs    sync.Pool // *[]byte: request buffers
	chans   sync.Pool // chan *jsonrpc.Response, empty and awaited by no one
	seq     atomic.Int64
	waiting atomic.Int32 // len(calls), read without mu
	notes   sync.WaitGroup

	mu     sync.Mutex
	calls  map[jsonrpc.ID]chan *jsonrpc.Response
	closed error // set when no response can come any more
}

// RoundTrip writes one request, whose JSON text build appends to buf
// (without a newline) with the id it is given, and returns the response
// with that id: read by go-sdk's reading goroutine (Read), and handed to
// the caller here without passing through go-sdk. It behaves as a call
// made through go-sdk on this connection does: the response's error is
// returned as a *jsonrpc.Error wrapped as go-sdk wraps it; when ctx ends
// first the call returns ctx.Err() and a notifications/cancelled is sent
// in the background (Close waits for it); when the connection ends first
// the error wraps mcp.ErrConnectionClosed; a write that fails is a
// *WriteError (never delivered) or wraps ctx's error, as Write's.
// method names the request in errors, as go-sdk does.
func (c *Conn) RoundTrip(ctx context.Context, method string, build func(buf []byte, id int64) []byte) (*jsonrpc.Response, error) {
	n := FirstDirectID + c.direct.seq.Add(1)
	id, _ := jsonrpc.MakeID(float64(n))
	ch, err := c.direct.register(id)
	if err != nil {
		return nil, &WriteError{Err: fmt.Errorf("writing to the server's stdin: %w", err)}
	}
	bp := c.direct.getBuf()
	data := build((*bp)[:0], n)
	if c.obs != nil {
		// Params stay in data: the Observer logs the text and looks only
		// at tools/list requests, which RoundTrip does not make (finding
		// them again costs more than the rest of the write).
		c.obs.Sent(&jsonrpc.Request{ID: id, Method: method}, data)
	}
	line := append(data, '\n')
	err = c.writeData(ctx, line)
	c.direct.putBuf(bp, line) // nothing keeps the line once written
	if err != nil {
		c.direct.forget(id)
		if ctx.Err() != nil {
			c.notifyCancelled(ctx, n)
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("calling %q: %w", method, err)
	}
	select {
	case resp := <-ch:
		c.direct.chans.Put(ch) // emptied, and no longer in calls: no one sends on it
		if resp.Error != nil {
			return nil, fmt.Errorf("calling %q: %w", method, resp.Error)
		}
		return resp, nil
	case <-ctx.Done():
		c.direct.forget(id)
		c.notifyCancelled(ctx, n)
		return nil, ctx.Err()
	}
}

// A NoticeHolder is the session of a connection, which closing waits for
// the cancellation notices RoundTrip sends in the background.
type NoticeHolder interface {
	// Notices ends when closing the session stops waiting for its
	// requests: a notice still being written then is given up.
	Notices() context.Context
	// Hold counts a notice that closing the session waits for; release
	// ends it.
	Hold() (release func())
}

// HoldNotices makes each cancellation notice RoundTrip sends held by h
// until it is written (or given up). Call it before the first RoundTrip
// (Transport.OnStart).
func (c *Conn) HoldNotices(h NoticeHolder) { c.notes = h }

// notifyCancelled tells the server, in the background, that the request
// with id n is no longer awaited, as go-sdk does for its own calls: the
// notice is held by the connection's NoticeHolder, whose closing waits
// for it (and Close waits for it too).
func (c *Conn) notifyCancelled(ctx context.Context, n int64) {
	reason := ctx.Err().Error()
	if !c.direct.addNote() {
		return // the connection has ended: nobody to tell
	}
	h := c.notes
	release := func() {}
	if h != nil {
		release = h.Hold()
	}
	go func() {
		defer c.direct.notes.Done()
		defer release()
		nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelNotifyTimeout)
		defer cancel()
		if h != nil {
			defer context.AfterFunc(h.Notices(), cancel)()
		}
		params, _ := json.Marshal(&mcp.CancelledParams{Reason: reason, RequestID: n})
		_ = c.Write(nctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: params})
	}()
}

// addNote counts one more cancellation notice, which Close waits for;
// false once the connection has ended. Close fails d before it waits, so
// no notice is counted while it waits (sync.WaitGroup's rule).
func (d *direct) addNote() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed != nil {
		return false
	}
	d.notes.Add(1)
	return true
}

// register makes id awaited; it fails once the connection has ended.
func (d *direct) register(id jsonrpc.ID) (chan *jsonrpc.Response, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed != nil {
		return nil, d.closed
	}
	if d.calls == nil {
		d.calls = make(map[jsonrpc.ID]chan *jsonrpc.Response)
	}
	ch, _ := d.chans.Get().(chan *jsonrpc.Response)
	if ch == nil {
		ch = make(chan *jsonrpc.Response, 1)
	}
	d.calls[id] = ch
	d.waiting.Store(int32(len(d.calls)))
	return ch, nil
}

// maxPooledBuf is the largest request buffer kept for the next request.
const maxPooledBuf = 16 << 10

// getBuf returns an empty request buffer.
func (d *direct) getBuf() *[]byte {
	if bp, _ := d.bufs.Get().(*[]byte); bp != nil {
		return bp
	}
	b := make([]byte, 0, 512)
	return &b
}

// putBuf keeps line, the request written from *bp, for the next request,
// unless it is large.
func (d *direct) putBuf(bp *[]byte, line []byte) {
	if cap(line) <= maxPooledBuf {
		*bp = line[:0]
		d.bufs.Put(bp)
	}
}

// forget stops awaiting id; a response that comes later goes to go-sdk,
// which drops it as it drops any response it did not ask for.
func (d *direct) forget(id jsonrpc.ID) {
	d.mu.Lock()
	delete(d.calls, id)
	d.waiting.Store(int32(len(d.calls)))
	d.mu.Unlock()
}

// deliver hands msg to the RoundTrip awaiting it and reports whether there
// was one.
func (d *direct) deliver(msg jsonrpc.Message) bool {
	if d.waiting.Load() == 0 {
		return false
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return false
	}
	d.mu.Lock()
	ch := d.calls[resp.ID]
	if ch != nil {
		delete(d.calls, resp.ID)
		d.waiting.Store(int32(len(d.calls)))
	}
	d.mu.Unlock()
	if ch == nil {
		return false
	}
	ch <- resp
	return true
}

// fail ends every RoundTrip still waiting with err, and the ones that start
// later at once.
func (d *direct) fail(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed == nil {
		d.closed = err
	}
	for id, ch := range d.calls {
		ch <- &jsonrpc.Response{ID: id, Error: err}
	}
	clear(d.calls)
	d.waiting.Store(0)
}

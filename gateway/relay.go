//lint:file-ignore SA1019 the gateway relays logging, deprecated in 2026-07-28 but alive in the handshake era it serves

package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The server's progress reports and log messages a forwarded request
// gets reach the gateway on the server's connection, and go-sdk hands
// them to the gateway's handlers one at a time, in order: a handler that
// waited on a client's stream would hold up the notifications of every
// other client on that connection (and their calls, which wait for their
// notifications before they return: internal/order). So a handler only
// puts the notification in the relay of the client session it belongs
// to (decided then: lane.attributeLog, the call's origin) and returns;
// the relay's writer, a goroutine of its own, writes the session's
// notifications to the client in the order they came, and ends when the
// queue is empty (or the gateway closes). A client that does not read
// its stream holds up its own relay only.
//
// There is one relay per client session rather than one per request:
// the client receives its notifications in the order its servers sent
// them, across its calls (on a stdio or standalone stream, one stream
// anyway), and its memory bound is the session's, however many calls it
// makes. A call of the session waits, before the gateway answers it,
// for the relay to have written what was put in it before (flush): the
// call's notifications reach its client before its answer. That wait is
// on the session's own stream only, and bounded by the call's context.
//
// A relay holds at most relayMessages notifications and relayBytes bytes
// (the JSON of a log message's data, level, logger and _meta, of a
// progress report's message, and relayItemBytes each; the one its writer
// is writing counts until it is written), and all the relays together
// relayTotalBytes. A relay with none queued takes a notification larger
// than its bound while all the relays together have room for it. A relay
// holding less than relaySmallBytes takes what keeps it within that
// whatever the total: a client that reads gets its log messages while
// clients that do not fill the total, and memory past the total is at
// most relaySmallBytes per client session. When a relay is full, a log
// message is dropped, and a progress report replaces the oldest report
// of the same request still waiting (the client gets the newer one) when
// it then fits (within these same bounds), or is dropped.
// What was dropped is counted and reported once to the gateway's log,
// with the session, when the relay empties.
const (
	relayMessages   = 1024
	relayBytes      = 8 << 20
	relayTotalBytes = 64 << 20
	relayItemBytes  = 256
	relaySmallBytes = 16 << 10
)

// relays are the relays of the gateway's client sessions.
type relays struct {
	ctx       context.Context // the gateway's: when it ends, every relay drops what it holds
	log       *slog.Logger
	maxMsgs   int
	maxBytes  int
	maxTotal  int
	small     int // relaySmallBytes
	mu        sync.Mutex
	writers   int           // writers running
	idle      chan struct{} // closed when the last writer ends
	by        map[*mcp.ServerSession]*relay
	total     int // bytes held by all the relays
	dropsSeen int // notifications dropped or replaced, for tests
}

// relay is one client session's queue of notifications to write. A
// relay is in relays.by while it holds or writes a notification.
type relay struct {
	ss      *mcp.ServerSession
	q       []relayItem   // in the order they came
	bytes   int           // of q and of the one being written
	next    uint64        // the sequence number of the next notification put in
	writing uint64        // the one being written, 0 when none
	wake    chan struct{} // closed when one is written or taken out; nil when no one waits
	// dropped log messages, and progress reports dropped or replaced.
	droppedLogs, droppedProgress int
}

// relayItem is a notification for the client of o: a log message or a
// progress report.
type relayItem struct {
	seq  uint64
	o    *origin
	log  *mcp.LoggingMessageParams
	prog *mcp.ProgressNotificationParams
	size int
}

func newRelays(ctx context.Context, log *slog.Logger, o *Options) *relays {
	rs := &relays{ctx: ctx, log: log, maxMsgs: relayMessages, maxBytes: relayBytes, maxTotal: relayTotalBytes, small: relaySmallBytes, by: make(map[*mcp.ServerSession]*relay)}
	if o.relayMessages > 0 {
		rs.maxMsgs = o.relayMessages
	}
	if o.relayBytes > 0 {
		rs.maxBytes = o.relayBytes
		rs.maxTotal = max(rs.maxTotal, 8*o.relayBytes)
	}
	return rs
}

// logMessage puts a server's log message in the relay of o's client session.
func (rs *relays) logMessage(o *origin, p *mcp.LoggingMessageParams) {
	q, size, err := heldLog(p)
	if err != nil {
		rs.log.Warn("dropped a server's log message that does not encode", "err", err)
		return
	}
	rs.put(o, relayItem{o: o, log: q, size: size})
}

// heldLog returns the copy of p a relay holds, its data and _meta as
// their JSON, and its size: relayItemBytes and the bytes of its data,
// level, logger and _meta.
func heldLog(p *mcp.LoggingMessageParams) (*mcp.LoggingMessageParams, int, error) {
	data, err := json.Marshal(p.Data)
	if err != nil {
		return nil, 0, fmt.Errorf("log message's data: %w", err)
	}
	q := *p
	q.Data = json.RawMessage(data)
	size := relayItemBytes + len(data) + len(q.Level) + len(q.Logger)
	if len(p.Meta) > 0 {
		q.Meta = make(mcp.Meta, len(p.Meta))
		for k, v := range p.Meta {
			b, err := json.Marshal(v)
			if err != nil {
				return nil, 0, fmt.Errorf("log message's _meta %q: %w", k, err)
			}
			q.Meta[k] = json.RawMessage(b)
			size += len(k) + len(b)
		}
	}
	return &q, size, nil
}

// progress puts a server's progress report in the relay of o's client
// session, when the client asked for the progress of its request.
func (rs *relays) progress(o *origin, p *mcp.ProgressNotificationParams) {
	if !o.hasToken() {
		return
	}
	q := &mcp.ProgressNotificationParams{Progress: p.Progress, Total: p.Total, Message: p.Message}
	rs.put(o, relayItem{o: o, prog: q, size: relayItemBytes + len(q.Message)})
}

// put adds it to the relay of o's client session, starting the relay's
// writer when it is not running. It never waits for the client.
func (rs *relays) put(o *origin, it relayItem) {
	_, ss := o.current()
	if ss == nil {
		return
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.ctx.Err() != nil {
		return
	}
	r := rs.by[ss]
	if r == nil {
		r = &relay{ss: ss, next: 1}
		rs.by[ss] = r
		if rs.writers == 0 {
			rs.idle = make(chan struct{})
		}
		rs.writers++
		go rs.run(r)
	}
	rs.add(r, it)
}

// add queues it in r, or drops it when r is full (see relayMessages).
// rs.mu is held.
func (rs *relays) add(r *relay, it relayItem) {
	if !rs.fits(r, it.size) && !rs.replace(r, it) {
		if it.log != nil {
			r.droppedLogs++
		} else {
			r.droppedProgress++
		}
		rs.dropsSeen++
		return
	}
	it.seq = r.next
	r.next++
	r.q = append(r.q, it)
	r.bytes += it.size
	rs.total += it.size
}

// fits reports whether a notification of size bytes fits in r now.
// rs.mu is held.
func (rs *relays) fits(r *relay, size int) bool {
	return rs.fitsWithout(r, size, 0, 0)
}

// fitsWithout reports whether a notification of size bytes fits in r
// once n notifications of r's queue, of bytes bytes, are taken out.
// rs.mu is held.
func (rs *relays) fitsWithout(r *relay, size, n, bytes int) bool {
	queued, held := len(r.q)-n, r.bytes-bytes
	switch {
	case queued >= rs.maxMsgs:
		return false
	case held+size <= rs.small:
		return true
	case queued > 0 && held+size > rs.maxBytes:
		return false
	}
	return rs.total-bytes+size <= rs.maxTotal
}

// replace makes room in the full relay r for the progress report it by
// taking out the oldest report of the same request still waiting, when
// it then fits (see fits), and reports whether it did. rs.mu is held.
func (rs *relays) replace(r *relay, it relayItem) bool {
	if it.prog == nil {
		return false
	}
	for i, old := range r.q {
		if old.prog == nil || old.o != it.o {
			continue
		}
		if !rs.fitsWithout(r, it.size, 1, old.size) {
			return false
		}
		r.q = append(r.q[:i], r.q[i+1:]...)
		r.bytes -= old.size
		rs.total -= old.size
		r.droppedProgress++
		rs.dropsSeen++
		r.signal()
		return true
	}
	return false
}

// signal wakes the calls waiting for r (flush). rs.mu is held.
func (r *relay) signal() {
	if r.wake != nil {
		close(r.wake)
		r.wake = nil
	}
}

// run is r's writer: it writes r's notifications to the client in order
// until r is empty, or drops them when the gateway closes, then takes r
// out of rs.by. The one being written counts in r's bytes and the total
// until its write returns.
func (rs *relays) run(r *relay) {
	for {
		rs.mu.Lock()
		if rs.ctx.Err() != nil {
			for _, it := range r.q {
				r.bytes -= it.size
				rs.total -= it.size
			}
			r.q = nil
		}
		if len(r.q) == 0 {
			r.writing = 0
			delete(rs.by, r.ss)
			r.signal()
			logs, progress := r.droppedLogs, r.droppedProgress
			if rs.writers--; rs.writers == 0 {
				close(rs.idle)
			}
			rs.mu.Unlock()
			if logs+progress > 0 {
				rs.log.Warn("a client session did not read its notifications fast enough: some were dropped",
					"session", r.ss.ID(), "log_messages", logs, "progress_reports", progress)
			}
			return
		}
		it := r.q[0]
		r.q[0] = relayItem{}
		r.q = r.q[1:]
		r.writing = it.seq
		rs.mu.Unlock()
		it.write()
		rs.mu.Lock()
		r.bytes -= it.size
		rs.total -= it.size
		r.writing = 0
		r.signal()
		rs.mu.Unlock()
	}
}

func (it relayItem) write() {
	if it.log != nil {
		it.o.writeLog(it.log)
	} else {
		it.o.writeProgress(it.prog)
	}
}

// flush waits until the relay of o's client session has written (or
// dropped) every notification put in it before flush was called, or ctx
// ends, or the gateway closes: the notifications a forwarded request's
// handlers relayed reach the client before the gateway's answer.
func (rs *relays) flush(ctx context.Context, o *origin) {
	_, ss := o.current()
	if ss == nil {
		return
	}
	rs.mu.Lock()
	r := rs.by[ss]
	if r == nil {
		rs.mu.Unlock()
		return
	}
	last := r.next - 1
	for (len(r.q) > 0 && r.q[0].seq <= last) || (r.writing != 0 && r.writing <= last) {
		if r.wake == nil {
			r.wake = make(chan struct{})
		}
		wake := r.wake
		rs.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return
		case <-rs.ctx.Done():
			return
		}
		rs.mu.Lock()
	}
	rs.mu.Unlock()
}

// wait waits until every writer has ended, for at most d: a writer whose
// client does not read ends when its write fails (Close closes the
// sessions, and cuts the HTTP answers' writes: closeWriteGrace).
func (rs *relays) wait(d time.Duration) {
	rs.mu.Lock()
	idle := rs.idle
	n := rs.writers
	rs.mu.Unlock()
	if n == 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	}
}

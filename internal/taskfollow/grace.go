package taskfollow

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/taskwire"
)

// A tools/call the server may answer with a task is sent by a goroutine
// of its own (Send). When the caller's context ends before the answer,
// Send returns at once, and the answer is waited for in the background
// (Late.Wait), for Grace at most: a server that makes the task as the
// context ends still hands it over, and the caller's side cancels it.
// Ending the tools/call at once would leave that task running, known to
// no one. With no answer by then, the tools/call is abandoned: its
// context is cancelled with the cause of the caller's context.

// Grace is how long the answer to a tools/call that may make a task is
// still waited for, in the background, after the caller's context ends.
const Grace = 2 * time.Second

// Answer is what a request sent by Send returned.
type Answer[T any] struct {
	Reply T
	Err   error
}

// Late is a request whose caller's context ended before its answer.
type Late[T any] struct {
	callCtx context.Context
	answer  <-chan Answer[T]
	abandon context.CancelCauseFunc
}

// Send runs send on a goroutine whose context outlives ctx (it keeps
// ctx's values) and returns its answer. When ctx ends first, it returns
// a Late instead, whose Wait must be called: the goroutine is the
// caller's until ctx ends, then Wait's.
func Send[T any](ctx context.Context, send func(context.Context) (T, error)) (late *Late[T], reply T, err error) {
	sctx, abandon := context.WithCancelCause(context.WithoutCancel(ctx))
	answer := make(chan Answer[T], 1)
	go func() {
		reply, err := send(sctx)
		answer <- Answer[T]{reply, err}
	}()
	select {
	case a := <-answer:
		abandon(nil)
		return nil, a.Reply, a.Err
	case <-ctx.Done():
	}
	select {
	case a := <-answer: // answered as ctx ended: the caller takes it
		abandon(nil)
		return nil, a.Reply, a.Err
	default:
	}
	return &Late[T]{callCtx: ctx, answer: answer, abandon: abandon}, reply, nil
}

// Wait waits for the answer, for Grace at most, or until life ends; the
// request is abandoned then (its context cancelled with the cause of
// the caller's context), and Wait returns what it returned.
func (l *Late[T]) Wait(life context.Context) Answer[T] {
	grace := time.NewTimer(Grace)
	defer grace.Stop()
	var a Answer[T]
	select {
	case a = <-l.answer:
	case <-grace.C:
		l.abandon(context.Cause(l.callCtx))
		a = <-l.answer
	case <-life.Done():
		l.abandon(context.Cause(l.callCtx))
		a = <-l.answer
	}
	l.abandon(nil)
	return a
}

// Background is the work a client does after the call that began it
// returned (Late.Wait). Stop ends the work running then and waits for
// it; work begun later runs until the next Stop.
type Background struct {
	mu  sync.Mutex
	now *bgRound // nil until work begins after a Stop
}

// bgRound is the work begun between two Stops.
type bgRound struct {
	life context.Context // ends on Stop
	end  context.CancelFunc
	wg   sync.WaitGroup
}

// Run runs f on a goroutine of b; f's context ends on Stop, and f must
// return soon after.
func (b *Background) Run(f func(life context.Context)) {
	b.mu.Lock()
	if b.now == nil {
		r := &bgRound{}
		r.life, r.end = context.WithCancel(context.Background())
		b.now = r
	}
	r := b.now
	r.wg.Add(1)
	b.mu.Unlock()
	go func() {
		defer r.wg.Done()
		f(r.life)
	}()
}

// Stop ends the work running now and returns a function that waits for
// it.
func (b *Background) Stop() (wait func()) {
	b.mu.Lock()
	r := b.now
	b.now = nil
	b.mu.Unlock()
	if r == nil {
		return func() {}
	}
	r.end()
	return r.wg.Wait
}

// CancelLate waits for the answer late brings to a tools/call of tool
// whose caller's context (callCtx) ended, and cancels the task the answer
// makes, if any, with cancel, given callCtx's values (its CallIdentity)
// and at most CancelTimeout. result returns the answer's result as sent,
// with ok false when the answer has none (nil raw with ok true: a result
// known to make no task). When life ends first, the tools/call is
// abandoned, and a task that comes is let go.
func CancelLate[T any](life, callCtx context.Context, late *Late[T], log *slog.Logger, tool string,
	result func(T) (raw json.RawMessage, ok bool), cancel func(ctx context.Context, taskID string) error) {
	a := late.Wait(life)
	var raw json.RawMessage
	ok := false
	if a.Err == nil {
		raw, ok = result(a.Reply)
	}
	if !ok {
		log.Debug("tool call abandoned after its context ended", "tool", tool, "answered", a.Err == nil)
		return
	}
	st, _, isTask, err := taskwire.Created(raw)
	if raw == nil || !isTask || err != nil || st.Status == completed || st.Status == failed || st.Status == cancelled {
		return
	}
	if life.Err() != nil {
		log.Debug("task made after its call ended, left running: the client was closed", "tool", tool, "task", st.TaskID)
		return
	}
	cctx, stop := context.WithTimeout(context.WithoutCancel(callCtx), CancelTimeout)
	defer stop()
	defer context.AfterFunc(life, stop)()
	err = cancel(cctx, st.TaskID)
	log.Debug("task made after its call ended: cancelled", "tool", tool, "task", st.TaskID, "acknowledged", err == nil, "error", err)
}

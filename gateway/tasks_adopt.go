package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/gateway/internal/subject"
	"github.com/mcpadapter/mcpadapter/internal/sdkerr"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A server's own task whose replica stopped (killed, or closed and handed
// it over) is adopted by the first replica asked about it: that replica
// writes its name into the task's record (compare-and-set: one replica
// wins), and follows the task at the server in the background as its
// own (Client.ResumeTask), writing the record as the task changes. The
// server's questions are put to the client again, through the record as
// any task's are, under keys of the adopting replica's (an answer meant
// for the stopped replica's question is never taken as an answer to a
// new one); the server's protocol carries the answer (tasks/update at
// 2026-07-28, the tasks/result exchange at 2025-11-25), as it does for
// the replica that made the task.

// adopt makes t, a mirror of a server's own task whose replica stopped,
// a task this replica follows; it returns the task as this replica then
// sees it, or t when another replica adopted it first or the store
// failed. ctx is the request's that asked about the task (its
// principal's).
func (s *taskStore) adopt(ctx context.Context, t *gwTask) *gwTask {
	rec := t.rec
	u := s.g.upstream(rec.Server)
	if u == nil {
		return t
	}
	if up, _, _ := u.status(); !up {
		return t // adopted once the server is up again
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return t
	}
	if own := s.tasks[t.id]; own != nil {
		s.mu.Unlock()
		return own
	}
	if tr := s.tries[t.id]; tr != nil && time.Now().Before(tr.next) {
		s.mu.Unlock()
		return t // its server was not reached a moment ago
	}
	s.mu.Unlock()
	keys := "a" + newKey()[:8] + "."
	claimed, err := s.sh.updateTask(ctx, t.id, func(r *taskRecord) bool {
		if terminal(r.Status) || r.Replica != rec.Replica || r.Handle == nil {
			return false
		}
		r.Replica, r.Asks, r.Answers, r.Keys = s.sh.replica, nil, nil, keys
		if r.Status == stInput {
			r.Status, r.Message = stWorking, ""
		}
		return true
	})
	if err != nil || claimed == nil || claimed.Replica != s.sh.replica {
		if err != nil {
			s.g.log.Warn("a task of a stopped replica could not be adopted", "task", t.id, "err", err)
		}
		return t
	}
	if err := s.sh.setEntry(ctx, claimed.Principal, t.id, func(e *indexEntry) { e.Replica = s.sh.replica }); err != nil {
		s.g.log.Warn("an adopted task could not be written to its principal's index", "task", t.id, "err", err)
	}
	a := &gwTask{id: t.id, principal: claimed.Principal, server: claimed.Server, tool: claimed.Tool, ext: claimed.Ext, sessionID: claimed.Session,
		shared: s.sh, created: claimed.Created, updated: time.Now(), ttl: time.Duration(claimed.TTLMs) * time.Millisecond,
		status: claimed.Status, message: claimed.Message, remote: claimed.Handle.TaskID, handle: claimed.Handle,
		keys: keys, done: make(chan struct{}), made: make(chan struct{}), wake: make(chan struct{}), handoff: make(chan struct{}), detach: make(chan struct{})}
	close(a.made)
	tctx, cancel := context.WithCancelCause(context.WithoutCancel(s.g.ctx))
	a.cancel = cancel
	s.mu.Lock()
	if s.closed || s.tasks[t.id] != nil {
		// Closed meanwhile: the record names this replica, whose
		// liveness record goes with it, and another replica adopts it.
		s.mu.Unlock()
		cancel(nil)
		return t
	}
	s.tasks[t.id] = a
	s.count[a.principal]++
	a.counted = true
	s.wg.Add(1)
	s.mu.Unlock()
	tctx = context.WithValue(withPrincipal(tctx, a.principal), taskKey{}, a)
	tctx = subject.With(tctx, subject.From(ctx))
	go s.follow(tctx, u, a)
	return a
}

// follow follows a, an adopted server's task, at server u to its end.
func (s *taskStore) follow(ctx context.Context, u *upstream, a *gwTask) {
	defer s.wg.Done()
	defer close(a.done)
	defer a.cancel(nil)
	finished := false
	defer func() {
		// On a goroutine of the gateway's own: a panic of the caller's
		// code (the task store, Telemetry) is logged, and the task ends
		// with an internal error if it had not ended.
		if p := recover(); p != nil {
			s.g.logPanic(p, "following a task adopted from another replica")
			if !finished {
				a.finish(nil, errInternal, a.ttl)
			}
		}
	}()
	var res *mcpadapter.Result
	cctx, err := u.as(ctx)
	if err == nil {
		err = u.gone()
	}
	if err == nil {
		res, err = u.client.ResumeTask(cctx, *a.handle, &mcpadapter.CallOptions{Detach: a.detach})
		u.closeAgain()
	}
	if a.handedOver() {
		return
	}
	if err != nil && !sdkerr.IsServerError(err) && !errors.As(err, new(*mcpadapter.TaskCancelledError)) &&
		!errors.As(err, new(*mcpadapter.ContentError)) && !errors.Is(context.Cause(ctx), errTaskCancelled) {
		// The server was not reached, or its answer not read: the task
		// may still run there. Another request adopts it again.
		s.release(ctx, a, err)
		return
	}
	s.mu.Lock()
	delete(s.tries, a.id)
	s.mu.Unlock()
	if err != nil && errors.Is(context.Cause(ctx), errTaskCancelled) {
		err = errTaskCancelled
	}
	var out error
	if err != nil {
		var tc *mcpadapter.TaskCancelledError
		if errors.As(err, &tc) || errors.Is(err, errTaskCancelled) {
			out = err
		} else {
			out = taskRPCError(rpcError(u.wrapErr(err)))
		}
	}
	if res != nil {
		a.finish(callResult(res), nil, a.ttl)
	} else {
		a.finish(nil, out, a.ttl)
	}
	finished = true
	s.sh.ended(ctx, a, s.g.log.Warn)
}

// errQuestionGone is the error of an answer to a question put by a
// replica that stopped.
func errQuestionGone(id, key string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("task %q has no question %q waiting for an answer: the gateway replica that put it stopped; read the task again (tasks/get) for the questions it waits for now", id, key)}
}

// adoptTry is when this replica adopts again a task whose server it
// could not reach (release): not before next, the wait doubling with each
// try (from taskBeat to maxAdoptWait), so that a client's polls of it
// are answered from its record, without a try, a store write and a
// warning each.
type adoptTry struct {
	next time.Time
	wait time.Duration
}

// maxAdoptWait bounds the wait between two tries; maxAdoptTries how many
// tasks' tries a replica keeps.
const (
	maxAdoptWait  = 16 * taskBeat
	maxAdoptTries = 1024
)

// release lets go of a, an adopted task this replica could not follow
// (err): its record names no replica again, so that the next request
// about it adopts it anew, here not before its next try.
func (s *taskStore) release(ctx context.Context, a *gwTask, err error) {
	now := time.Now()
	s.mu.Lock()
	if s.tasks[a.id] == a {
		delete(s.tasks, a.id)
		s.uncount(a)
	}
	tr := s.tries[a.id]
	first := tr == nil
	if first {
		if len(s.tries) >= maxAdoptTries {
			for id, x := range s.tries {
				if now.Sub(x.next) > maxAdoptWait {
					delete(s.tries, id)
				}
			}
		}
		tr = &adoptTry{wait: taskBeat}
		if len(s.tries) < maxAdoptTries {
			s.tries[a.id] = tr
		}
	} else {
		tr.wait = min(2*tr.wait, maxAdoptWait)
	}
	tr.next = now.Add(tr.wait)
	wait := tr.wait
	s.mu.Unlock()
	log := s.g.log.Debug
	if first {
		log = s.g.log.Warn // once per task while its server is not reached
	}
	log("an adopted task could not be followed at its server; it is left for another try", "task", a.id, "server", a.server, "retry", wait, "err", s.g.red.err(err))
	if err := s.sh.handOverRecord(ctx, a); err != nil {
		s.g.log.Warn("an adopted task could not be released in the task store; it is adopted again once this replica's liveness record expires", "task", a.id, "err", err)
	}
}

package gateway

import (
	"context"
	"errors"
)

// With TaskOptions.Store, a replica that closes (Close; Shutdown after its
// grace period) hands its tasks to the other replicas instead of
// cancelling them:
//
//   - Shutdown waits, within its grace period, for the calls the gateway
//     runs itself (plain calls) to end: their results are in the store,
//     and any replica answers them.
//   - Close then cancels the plain calls still running (the server is
//     told: notifications/cancelled), and their tasks fail with
//     CodeCallInterrupted: they are never run again.
//   - A server's own task is not cancelled at the server. Its record is
//     marked handed over (no replica runs it), and this replica stops
//     following it only once its client of the server is closed, so
//     that no tasks/cancel reaches the server. Any other replica adopts
//     it at once (tasks_adopt.go), without waiting for this replica's
//     liveness record to expire.

// errTaskStopped is the cause that ends a plain call when its replica
// closes with a store: its task fails with CodeCallInterrupted.
var errTaskStopped = errors.New("the gateway replica running the call stopped")

// errTaskHandedOver is the cause that ends this replica's following of a
// server's own task it handed over: the task goes on at the server.
var errTaskHandedOver = errors.New("the gateway replica stopped; another replica follows the server's task")

// handOver marks t handed over when it is a server's own task that runs:
// this replica no longer writes its record; it reports whether it did.
func (t *gwTask) handOver() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if terminal(t.status) || t.remote == "" {
		return false
	}
	t.handed = true
	return true
}

// handedOver reports whether t was handed over.
func (t *gwTask) handedOver() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.handed
}

// waitPlain waits for the calls the gateway runs itself here to end (or to
// become a server's own task), or for ctx to end: Shutdown's grace period
// for them, with a store.
func (s *taskStore) waitPlain(ctx context.Context) {
	if s.sh == nil {
		return
	}
	s.mu.Lock()
	var plain []*gwTask
	for _, t := range s.tasks {
		t.mu.Lock()
		if !terminal(t.status) && t.remote == "" {
			plain = append(plain, t)
		}
		t.mu.Unlock()
	}
	s.mu.Unlock()
	for _, t := range plain {
		select {
		case <-t.done:
		case <-t.made:
		case <-ctx.Done():
			return
		}
	}
}

// handOverRecord marks the record of task t, which this replica runs,
// handed over: no replica runs it, so the next replica asked about it
// adopts it at once. It names the server's task (a write of it may have
// failed). Its questions were put by this replica's call, and go with it.
func (sh *sharedTasks) handOverRecord(ctx context.Context, t *gwTask) error {
	t.mu.Lock()
	h := t.handle
	t.mu.Unlock()
	handed := false
	_, err := sh.updateTask(ctx, t.id, func(r *taskRecord) bool {
		if handed = !terminal(r.Status) && r.Replica == sh.replica; !handed {
			return false
		}
		if r.Handle == nil {
			r.Handle = h
		}
		r.Replica, r.Asks, r.Answers = "", nil, nil
		if r.Status == stInput {
			r.Status, r.Message = stWorking, ""
		}
		return true
	})
	if err != nil || !handed {
		return err
	}
	// Its index entry names no replica: it counts against the
	// principal's cap until a replica adopts it (admit).
	return sh.setEntry(ctx, t.principal, t.id, func(e *indexEntry) { e.Replica = "" })
}

// close stops the tasks that run here. Without a store, each call is
// cancelled, and close waits for them. With one, the plain calls are
// cancelled (and failed with CodeCallInterrupted) and waited for, and
// the servers' own tasks are handed over (their records marked); wait
// ends those after the servers' connections are closed.
func (s *taskStore) close() {
	s.mu.Lock()
	s.closed = true
	var stopping []*gwTask
	for _, t := range s.tasks {
		switch {
		case s.sh == nil:
			t.cancel(errClosed)
		case t.handOver():
			s.handed = append(s.handed, t)
			continue
		default:
			t.cancel(errTaskStopped)
		}
		stopping = append(stopping, t)
	}
	handed := s.handed
	s.mu.Unlock()
	for _, t := range stopping {
		<-t.done
	}
	for _, t := range handed {
		if err := s.sh.handOverRecord(context.Background(), t); err != nil {
			s.g.log.Warn("a task could not be handed over in the task store; other replicas follow it once this replica's liveness record expires", "task", t.id, "err", err)
		}
	}
}

// letGo lets go of t, a server's own task another replica adopted while
// this one was taken for stopped (apply marked it away): t is forgotten
// here (requests read its record), and its call stops following it
// without cancelling it (CallOptions.Detach).
func (s *taskStore) letGo(t *gwTask) {
	t.mu.Lock()
	away := t.away
	t.away = false
	t.mu.Unlock()
	if !away {
		return
	}
	s.g.log.Warn("another gateway replica adopted a task this one ran, while this one was taken for stopped (its liveness record expired); this replica lets go of it", "task", t.id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return // close hands it over
	}
	if s.tasks[t.id] == t {
		delete(s.tasks, t.id)
		s.uncount(t)
	}
	close(t.detach)
	s.handed = append(s.handed, t) // a 2025-11-25 question waits until wait
}

// wait ends the servers' own tasks handed over (the servers' clients
// are closed: their calls end without a tasks/cancel), waits for every task's
// call and for runBeats, and deletes this replica's liveness record.
func (s *taskStore) wait() {
	s.mu.Lock()
	handed := s.handed // closed: letGo adds none
	s.mu.Unlock()
	for _, t := range handed {
		// Not its context: a call whose context ends cancels its task
		// at the server. A question the call waits on ends; the client
		// is closed, and the call ends without a tasks/cancel.
		close(t.handoff)
	}
	s.mu.Lock()
	select {
	case <-s.quit:
	default:
		close(s.quit)
	}
	s.mu.Unlock()
	s.wg.Wait()
	if s.sh != nil {
		if err := s.sh.stop(context.Background()); err != nil {
			s.g.log.Warn("the task store failed: this replica's liveness record was not deleted", "err", err)
		}
	}
}

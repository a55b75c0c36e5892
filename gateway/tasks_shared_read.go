package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The side of TaskOptions.Store on a replica that does not run a task:
// the task is a mirror of its record (gwTask.rec set).

// fromStore returns principal's task id as its record shows it, brought
// up to date when the replica that ran it has stopped (resolve); a task
// of another principal's is unknown.
func (s *taskStore) fromStore(ctx context.Context, principal, id string) (*gwTask, error) {
	rec, err := s.sh.loadTask(ctx, id)
	if err != nil {
		s.g.log.Warn("the task store failed; a request about a task is refused", "err", err)
		return nil, errTaskStore()
	}
	if rec == nil || rec.Principal != principal {
		return nil, errUnknownTask(id)
	}
	return s.resolve(ctx, mirror(id, rec)), nil
}

// resolve returns t as it stands when the replica that runs it has
// stopped: a call the gateway ran itself failed (errTaskLost; it is
// never run again), and a server's own task adopted by a replica
// (tasks_adopt.go): this one, or another that was first.
func (s *taskStore) resolve(ctx context.Context, t *gwTask) *gwTask {
	rec := t.rec
	if terminal(rec.Status) {
		return t
	}
	if alive, err := s.sh.alive(ctx, rec.Replica, nil); err != nil || alive {
		return t
	}
	if rec.Handle == nil || rec.Handle.TaskID == "" {
		return s.end(ctx, t, func(r *taskRecord) {
			r.Status, r.Error = stFailed, errTaskLost(t.id)
			r.Message = r.Error.Message
		})
	}
	return s.adopt(ctx, t)
}

// end writes t's end (fn sets it) into its record, unless the record
// shows it ended already, and returns t as the record then shows it.
func (s *taskStore) end(ctx context.Context, t *gwTask, fn func(*taskRecord)) *gwTask {
	rec, err := s.sh.updateTask(ctx, t.id, func(r *taskRecord) bool {
		if terminal(r.Status) {
			return false
		}
		fn(r)
		r.Asks, r.Answers = nil, nil
		r.Expires = time.Now().Add(time.Duration(r.TTLMs) * time.Millisecond)
		return true
	})
	if err != nil || rec == nil {
		if err != nil {
			s.g.log.Warn("the end of a task could not be written to the task store", "task", t.id, "err", err)
		}
		return t
	}
	if err := s.sh.setEntry(ctx, rec.Principal, t.id, func(e *indexEntry) { e.Expires = rec.Expires }); err != nil {
		s.g.log.Warn("the end of a task could not be written to its principal's index", "task", t.id, "err", err)
	}
	return mirror(t.id, rec)
}

// cancelMirror cancels t, which another replica runs or ran: its record
// shows it cancelled (the running replica ends its call on its next
// beat) and a server's own task is cancelled at the server.
func (s *taskStore) cancelMirror(ctx context.Context, t *gwTask) error {
	var was string
	rec, err := s.sh.updateTask(ctx, t.id, func(r *taskRecord) bool {
		if terminal(r.Status) {
			was = r.Status
			return false
		}
		r.Status, r.Message, r.Asks, r.Answers = stCancelled, "cancelled by the client", nil, nil
		r.Expires = time.Now().Add(time.Duration(r.TTLMs) * time.Millisecond)
		return true
	})
	switch {
	case err != nil:
		s.g.log.Warn("the task store failed; a cancel is refused", "task", t.id, "err", err)
		return errTaskStore()
	case rec == nil:
		return errUnknownTask(t.id)
	case was != "":
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("task %q is %s already", t.id, was)}
	}
	if err := s.sh.setEntry(ctx, rec.Principal, t.id, func(e *indexEntry) { e.Counted, e.Expires = false, rec.Expires }); err != nil {
		s.g.log.Warn("a cancel could not be written to its principal's index", "task", t.id, "err", err)
	}
	if h := rec.Handle; h != nil && h.TaskID != "" {
		if u := s.g.upstream(rec.Server); u != nil {
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			if cctx, err := u.as(withPrincipal(ctx, rec.Principal)); err == nil && u.gone() == nil {
				if _, err := u.client.CancelTask(cctx, h.TaskID); err != nil {
					s.g.log.Warn("a server's task could not be cancelled at the server", "task", t.id, "server", rec.Server, "err", err)
				}
				u.closeAgain()
			}
		}
	}
	*t = *mirror(t.id, rec)
	return nil
}

// fetchedMirror records that the client has the outcome of t, which
// another replica ran.
func (s *taskStore) fetchedShared(ctx context.Context, t *gwTask) {
	exp := time.Now().Add(fetchedGrace)
	if t.rec != nil {
		if _, err := s.sh.updateTask(ctx, t.id, func(r *taskRecord) bool {
			if r.Expires.IsZero() || !exp.Before(r.Expires) {
				return false
			}
			r.Expires = exp
			return true
		}); err != nil {
			s.g.log.Warn("a fetched task could not be written to the task store", "task", t.id, "err", err)
		}
	}
	if err := s.sh.setEntry(ctx, t.principal, t.id, func(e *indexEntry) {
		e.Counted = false
		if !e.Expires.IsZero() && exp.Before(e.Expires) {
			e.Expires = exp
		}
	}); err != nil {
		s.g.log.Warn("a fetched task could not be written to its principal's index", "task", t.id, "err", err)
	}
}

// forgetShared removes t's record and its index entry.
func (s *taskStore) forgetShared(ctx context.Context, t *gwTask) {
	octx, cancel := s.sh.op(ctx)
	defer cancel()
	if err := s.sh.store.DeleteTask(octx, taskRecKey(t.id)); err != nil {
		s.g.log.Warn("a task's record could not be deleted from the task store", "task", t.id, "err", err)
	}
	if err := s.sh.dropEntry(ctx, t.principal, t.id); err != nil {
		s.g.log.Warn("a task could not be removed from its principal's index", "task", t.id, "err", err)
	}
}

// answer hands the client's answer to t's question key: here, or through
// its record to the replica that runs it (on its next beat). An answer
// to a question put by a replica that stopped is an error that says so
// (it is taken for no other question); one to a key no question has is
// dropped.
func (s *taskStore) answer(ctx context.Context, t *gwTask, key string, r *mcp.ElicitResult) error {
	if t.rec == nil {
		if !t.answer(key, r) && staleKey(t.keys, key) {
			return errQuestionGone(t.id, key) // adopted: the key was the stopped replica's
		}
		return nil
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid params: the answer to question %q: %v", key, err)}
	}
	gone := false
	if _, err := s.sh.updateTask(ctx, t.id, func(rec *taskRecord) bool {
		if rec.Asks[key] == nil {
			// Adopted (by another replica), or handed over and not yet
			// adopted: a question of a replica that stopped.
			gone = staleKey(rec.Keys, key) || rec.Replica == ""
			return false
		}
		alive, err := s.sh.alive(ctx, rec.Replica, nil)
		if gone = err == nil && !alive; gone {
			return false
		}
		if rec.Answers == nil {
			rec.Answers = map[string]json.RawMessage{}
		}
		rec.Answers[key] = raw
		return true
	}); err != nil {
		s.g.log.Warn("an answer to a task's question could not be written to the task store", "task", t.id, "err", err)
		return errTaskStore()
	}
	if gone {
		return errQuestionGone(t.id, key)
	}
	return nil
}

// staleKey reports whether key is a question's key put by a replica that
// stopped, on a task whose questions' keys start with keys: one a
// replica adopted (keys not empty).
func staleKey(keys, key string) bool {
	return keys != "" && !strings.HasPrefix(key, keys)
}

// listShared returns principal's tasks from its index, oldest first; ss
// as in list.
func (s *taskStore) listShared(ctx context.Context, principal string, ss *mcp.ServerSession) ([]*gwTask, error) {
	idx, err := s.sh.loadIndex(ctx, principal)
	if err != nil {
		s.g.log.Warn("the task store failed; tasks/list is refused", "err", err)
		return nil, errTaskStore()
	}
	sid := ""
	if ss != nil {
		sid = ss.ID()
	}
	var out []*gwTask
	for _, e := range idx.Tasks {
		s.mu.Lock()
		t := s.tasks[e.ID]
		s.mu.Unlock()
		if t == nil {
			rec, err := s.sh.loadTask(ctx, e.ID)
			if err != nil {
				return nil, errTaskStore()
			}
			if rec == nil {
				continue
			}
			t = mirror(e.ID, rec)
		}
		if t.principal == principal && (principal != "" || sid != "" && t.sessionID == sid) {
			out = append(out, t)
		}
	}
	return out, nil
}

package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The side of TaskOptions.Store on the replica that runs a task.

// newRecord is the first record of t, which this replica runs.
func (sh *sharedTasks) newRecord(t *gwTask, ss *mcp.ServerSession) *taskRecord {
	rec := &taskRecord{Principal: t.principal, Server: t.server, Tool: t.tool, Ext: t.ext, Replica: sh.replica,
		Created: t.created, TTLMs: t.ttl.Milliseconds(), Status: stWorking}
	if ss != nil {
		rec.Session = ss.ID()
	}
	return rec
}

// apply writes t's state as this replica sees it into rec; it reports
// false when rec shows the task ended already: on another replica's word
// (it was cancelled there), or failed by encodeTask (its record would be
// too large), and then the task ends here as the record says.
func (sh *sharedTasks) apply(t *gwTask, rec *taskRecord) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.handed {
		return false // the other replicas' now
	}
	if rec.Replica != sh.replica {
		// Another replica adopted it while this one was taken for
		// stopped (its liveness record expired): it is that replica's,
		// ended there or not (this one sends no tasks/cancel).
		t.handed, t.away = true, true
		return false
	}
	if terminal(rec.Status) {
		if !terminal(t.status) {
			t.status, t.message, t.err = rec.Status, rec.Message, rec.Error
			t.changed()
			t.cancel(errTaskCancelled)
		}
		return false
	}
	for key, raw := range rec.Answers {
		var r mcp.ElicitResult
		if json.Unmarshal(raw, &r) == nil {
			t.answerLocked(key, &r)
		}
	}
	rec.Answers = nil
	rec.Status, rec.Message, rec.Error, rec.Expires = t.status, t.message, t.err, t.expires
	rec.Handle = t.handle
	rec.Result = nil
	if t.result != nil {
		b, err := json.Marshal(t.result)
		if err != nil || len(b) > maxTaskRecord {
			t.status, t.result = stFailed, nil
			t.err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("task %q: the call's result is %d bytes, over the %d bytes the gateway keeps of a task's result for its replicas; the call ran, and its result is not kept", t.id, len(b), maxTaskRecord)}
			t.message = t.err.Message
			t.changed()
			rec.Status, rec.Message, rec.Error = t.status, t.message, t.err
		} else {
			rec.Result = b
		}
	}
	rec.Asks = nil
	if len(t.asks) > 0 {
		rec.Asks = make(map[string]*mcp.ElicitParams, len(t.asks))
		for _, q := range t.asks {
			rec.Asks[q.key] = q.params
		}
	}
	return true
}

// sync writes t's state into its record.
func (sh *sharedTasks) sync(ctx context.Context, t *gwTask) error {
	_, err := sh.updateTask(ctx, t.id, func(rec *taskRecord) bool {
		before := rec.raw
		if !sh.apply(t, rec) {
			return false
		}
		b, _ := encodeTask(t.id, rec)
		return string(b) != string(before) || time.Since(rec.Updated) > indexTTL/4
	})
	return err
}

// started writes t's first record; t counts against its principal's cap
// across replicas (admit) already.
func (sh *sharedTasks) started(ctx context.Context, t *gwTask, ss *mcp.ServerSession) error {
	rec := sh.newRecord(t, ss)
	return sh.writeTask(ctx, t.id, rec)
}

// ended records that t ended here: its record, and its index entry no
// longer running (kept until the record expires). When the store fails,
// t is marked unsaved, and runBeats writes its end again.
func (sh *sharedTasks) ended(ctx context.Context, t *gwTask, log func(string, ...any)) {
	ok := true
	if err := sh.sync(ctx, t); err != nil {
		ok = false
		log("a task's outcome could not be written to the task store", "task", t.id, "err", err)
	}
	t.mu.Lock()
	exp := t.expires
	t.mu.Unlock()
	if err := sh.setEntry(ctx, t.principal, t.id, func(e *indexEntry) { e.Expires = exp }); err != nil {
		ok = false
		log("a task's end could not be written to its principal's index", "task", t.id, "err", err)
	}
	t.mu.Lock()
	t.unsaved = !ok
	t.mu.Unlock()
}

// runLiveness writes this replica's liveness record every taskBeat until
// s closes. It runs apart from runBeats: however long looking at the
// records of the tasks that run here takes, the liveness record is
// written on time, and other replicas never take this one for stopped
// while it runs calls.
func (s *taskStore) runLiveness() {
	defer s.wg.Done()
	tick := time.NewTicker(taskBeat)
	defer tick.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-tick.C:
		}
		s.g.recovered("the task store, writing this replica's liveness record", func() {
			if err := s.sh.beat(s.g.ctx); err != nil {
				s.g.log.Warn("the task store failed: this replica's liveness record was not written", "err", err)
			}
		})
	}
}

// runBeats looks at the records of the tasks that run here every
// taskBeat until s closes: a cancel or an answer written by another
// replica is applied, a record is written again before it expires, and
// the end of a task that the store failed to take is written again.
func (s *taskStore) runBeats() {
	sh := s.sh
	defer s.wg.Done()
	tick := time.NewTicker(taskBeat)
	defer tick.Stop()
	ctx := s.g.ctx
	for {
		s.mu.Lock()
		var running, unsaved []*gwTask
		for _, t := range s.tasks {
			t.mu.Lock()
			switch {
			case !terminal(t.status):
				running = append(running, t)
			case t.unsaved:
				unsaved = append(unsaved, t)
			}
			t.mu.Unlock()
		}
		s.mu.Unlock()
		for _, t := range unsaved {
			s.g.recovered("the task store, writing a task's end", func() { sh.ended(ctx, t, s.g.log.Warn) })
		}
		for _, t := range running {
			s.g.recovered("the task store, writing a running task's record", func() {
				if err := sh.sync(ctx, t); err != nil {
					s.g.log.Warn("a running task's record could not be written to the task store", "task", t.id, "err", err)
				}
			})
			s.letGo(t)
		}
		select {
		case <-s.quit:
			return
		case <-tick.C:
		}
	}
}

// mirror is task id as its record shows it, on a replica that does not
// run it.
func mirror(id string, rec *taskRecord) *gwTask {
	t := &gwTask{id: id, principal: rec.Principal, server: rec.Server, tool: rec.Tool, ext: rec.Ext, created: rec.Created,
		ttl: time.Duration(rec.TTLMs) * time.Millisecond, rec: rec, sessionID: rec.Session,
		status: rec.Status, message: rec.Message, updated: rec.Updated, err: rec.Error, handle: rec.Handle, expires: rec.Expires, wake: make(chan struct{})}
	if len(rec.Result) > 0 {
		var res mcp.CallToolResult
		if err := json.Unmarshal(rec.Result, &res); err != nil {
			t.status, t.err = stFailed, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("task %q: its result in the task store cannot be read: %v", id, err)}
		} else {
			t.result = &res
		}
	}
	for _, key := range slices.Sorted(maps.Keys(rec.Asks)) {
		t.asks = append(t.asks, &taskQuestion{key: key, params: rec.Asks[key]})
	}
	return t
}

// errTaskStore is the error of a request about a task when the task store
// fails.
func errTaskStore() *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeServerUnavailable, Message: "the gateway's task store is unavailable; try again"}
}

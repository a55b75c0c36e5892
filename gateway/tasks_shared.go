package gateway

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// With TaskOptions.Store, every task has a record in the store, so that
// any replica answers tasks/get, tasks/result, tasks/list, tasks/cancel
// and tasks/update about it. The replica that made a task runs its call
// (the server's own task, followed, or a plain call) and writes the
// record when the task changes. Another replica answers from the record,
// and writes to it: a cancel (the running replica sees it on its next
// beat and ends the call; a server's own task is cancelled at the server
// at once), and a client's answers to the task's questions (handed to the
// question on the running replica's next beat).
//
// Each replica writes a liveness record every beat (taskBeat). A task
// whose replica's liveness record is gone (the replica was killed) is a
// server's own task, which any replica follows at the server (it knows
// the server's task id), or a call the gateway ran itself, which is
// answered as failed with CodeCallInterrupted: its outcome is unknown,
// and it is never run again.
//
// Each principal has an index record: its tasks' ids, whether each
// counts against TaskOptions.MaxPerPrincipal, and which replica runs it.
// It is changed by compare-and-set only, so the cap counts the tasks of
// every replica; a running task of a replica that stopped no longer
// counts once its liveness record has expired.

// taskBeat is how often a replica writes its liveness record and looks at
// the records of the tasks it runs; replicaTTL is how long a liveness
// record lasts.
const (
	taskBeat   = time.Second
	replicaTTL = 5 * taskBeat
)

// maxTaskRecord bounds a task's result; maxStoredRecord its whole record
// (readers refuse a larger one); maxTaskText each other text of a record
// that would be over maxStoredRecord (status message, error, question);
// maxIndexRecord an index record read from the store.
const (
	maxTaskRecord   = 1 << 20
	maxStoredRecord = maxTaskRecord + maxTaskRecord/4
	maxTaskText     = 4 << 10
	maxIndexRecord  = 1 << 20
	indexTTL        = 24 * time.Hour
)

// taskRecord is what the store keeps of a task.
type taskRecord struct {
	Principal string                       `json:"principal"`
	Session   string                       `json:"session,omitempty"` // the shared session that made it
	Server    string                       `json:"server"`
	Tool      string                       `json:"tool"`
	Ext       bool                         `json:"ext,omitempty"`
	Replica   string                       `json:"replica"` // that runs it; "": none (handed over)
	Handle    *mcpadapter.TaskHandle       `json:"handle,omitempty"`
	Created   time.Time                    `json:"created"`
	Updated   time.Time                    `json:"updated"`
	TTLMs     int64                        `json:"ttlMs"`
	Status    string                       `json:"status"`
	Message   string                       `json:"message,omitempty"`
	Result    json.RawMessage              `json:"result,omitempty"`
	Error     *jsonrpc.Error               `json:"error,omitempty"`
	Asks      map[string]*mcp.ElicitParams `json:"asks,omitempty"`
	Answers   map[string]json.RawMessage   `json:"answers,omitempty"`
	Keys      string                       `json:"keys,omitempty"`   // starts its questions' keys: the adopting replica's (tasks_adopt.go)
	Expires   time.Time                    `json:"expires,omitzero"` // zero while it runs

	raw []byte
}

// taskIndex is a principal's index record.
type taskIndex struct {
	Tasks []indexEntry `json:"tasks"`
	raw   []byte
}

type indexEntry struct {
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
	Replica string    `json:"replica"`
	Counted bool      `json:"counted,omitempty"`
	Expires time.Time `json:"expires,omitzero"` // zero while it runs
}

// sharedTasks is the gateway's side of TaskOptions.Store.
type sharedTasks struct {
	store   TaskStore
	timeout time.Duration
	replica string // this replica's name in the records
}

func newSharedTasks(o *TaskOptions) *sharedTasks {
	if o == nil || o.Store == nil {
		return nil
	}
	s := &sharedTasks{store: o.Store, timeout: o.StoreTimeout, replica: rand.Text()}
	if s.timeout <= 0 {
		s.timeout = DefaultSessionStoreTimeout
	}
	return s
}

func taskRecKey(id string) string { return "task." + id }

func replicaKey(r string) string { return "replica." + r }

func indexKey(principal string) string {
	h := sha256.Sum256([]byte(principal))
	return "tasks." + hex.EncodeToString(h[:20])
}

// op bounds a store operation; it goes on when ctx is cancelled.
func (s *sharedTasks) op(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
}

// load reads the record at key into v; found is false when there is none.
func (s *sharedTasks) load(ctx context.Context, key string, v any, limit int) (raw []byte, found bool, err error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	b, err := s.store.LoadTask(ctx, key)
	if err != nil || b == nil {
		return nil, false, err
	}
	if len(b) > limit {
		return nil, false, fmt.Errorf("the task store's record %s is %d bytes, over %d", key, len(b), limit)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return nil, false, fmt.Errorf("the task store's record %s cannot be read: %w", key, err)
	}
	return b, true, nil
}

// loadTask reads task id's record; nil when there is none.
func (s *sharedTasks) loadTask(ctx context.Context, id string) (*taskRecord, error) {
	var rec taskRecord
	raw, ok, err := s.load(ctx, taskRecKey(id), &rec, maxStoredRecord)
	if !ok {
		return nil, err
	}
	rec.raw = raw
	return &rec, nil
}

// recordTTL is how long the store keeps rec: until it expires, or a day
// past its last write while it runs (the running replica writes it again
// every quarter of that).
func recordTTL(rec *taskRecord) time.Duration {
	if rec.Expires.IsZero() {
		return indexTTL
	}
	return max(time.Until(rec.Expires), time.Millisecond)
}

var errTaskRecordChanged = errors.New("the task's record changed in the task store")

// writeTask writes rec: a new one (old nil), or over old only.
func (s *sharedTasks) writeTask(ctx context.Context, id string, rec *taskRecord) error {
	rec.Updated = time.Now().UTC()
	b, err := encodeTask(id, rec)
	if err != nil {
		return err
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	if rec.raw == nil {
		ok, err := s.store.AddTask(ctx, taskRecKey(id), b, recordTTL(rec))
		if err == nil && !ok {
			err = errTaskRecordChanged
		}
		if err == nil {
			rec.raw = b
		}
		return err
	}
	ok, err := s.store.ReplaceTask(ctx, taskRecKey(id), rec.raw, b, recordTTL(rec))
	if err == nil && !ok {
		err = errTaskRecordChanged
	}
	if err == nil {
		rec.raw = b
	}
	return err
}

// updateTask changes task id's record with fn (which reports whether
// there is a change to write) and writes it, reading it again when
// another replica changed it meanwhile; it returns the record as written
// (nil: there is none).
func (s *sharedTasks) updateTask(ctx context.Context, id string, fn func(*taskRecord) bool) (*taskRecord, error) {
	for range 16 {
		rec, err := s.loadTask(ctx, id)
		if err != nil || rec == nil {
			return nil, err
		}
		if !fn(rec) {
			return rec, nil
		}
		if err := s.writeTask(ctx, id, rec); !errors.Is(err, errTaskRecordChanged) {
			return rec, err
		}
	}
	return nil, errTaskRecordChanged
}

// loadIndex reads principal's index record (empty when there is none).
func (s *sharedTasks) loadIndex(ctx context.Context, principal string) (*taskIndex, error) {
	var idx taskIndex
	raw, _, err := s.load(ctx, indexKey(principal), &idx, maxIndexRecord)
	if err != nil {
		return nil, err
	}
	idx.raw = raw
	now := time.Now()
	idx.Tasks = slices.DeleteFunc(idx.Tasks, func(e indexEntry) bool { return !e.Expires.IsZero() && now.After(e.Expires) })
	return &idx, nil
}

// updateIndex changes principal's index record with fn, which returns an
// error to write nothing, and writes it by compare-and-set.
func (s *sharedTasks) updateIndex(ctx context.Context, principal string, fn func(*taskIndex) error) error {
	for i := range 32 {
		idx, err := s.loadIndex(ctx, principal)
		if err != nil {
			return err
		}
		if err := fn(idx); err != nil {
			return err
		}
		b, err := json.Marshal(idx)
		if err != nil {
			return err
		}
		if len(b) > maxIndexRecord {
			return fmt.Errorf("the index of a principal's tasks would be %d bytes, over %d", len(b), maxIndexRecord)
		}
		octx, cancel := s.op(ctx)
		var ok bool
		if idx.raw == nil {
			ok, err = s.store.AddTask(octx, indexKey(principal), b, indexTTL)
		} else {
			ok, err = s.store.ReplaceTask(octx, indexKey(principal), idx.raw, b, indexTTL)
		}
		cancel()
		if err != nil || ok {
			return err
		}
		time.Sleep(time.Duration(i+1) * time.Millisecond) // others write it: let them finish
	}
	return errors.New("the index of a principal's tasks changed in the task store too often to update")
}

// setEntry changes the entry of task id in principal's index.
func (s *sharedTasks) setEntry(ctx context.Context, principal, id string, fn func(*indexEntry)) error {
	return s.updateIndex(ctx, principal, func(idx *taskIndex) error {
		for i := range idx.Tasks {
			if idx.Tasks[i].ID == id {
				fn(&idx.Tasks[i])
			}
		}
		return nil
	})
}

// dropEntry removes task id from principal's index.
func (s *sharedTasks) dropEntry(ctx context.Context, principal, id string) error {
	return s.updateIndex(ctx, principal, func(idx *taskIndex) error {
		idx.Tasks = slices.DeleteFunc(idx.Tasks, func(e indexEntry) bool { return e.ID == id })
		return nil
	})
}

// alive reports whether replica r's liveness record is in the store (this
// replica is alive; no replica, "", is a task handed over by a replica
// that closed); known caches answers within one request.
func (s *sharedTasks) alive(ctx context.Context, r string, known map[string]bool) (bool, error) {
	if r == s.replica {
		return true, nil
	}
	if r == "" {
		return false, nil
	}
	if v, ok := known[r]; ok {
		return v, nil
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	b, err := s.store.LoadTask(ctx, replicaKey(r))
	if err != nil {
		return false, err
	}
	if known != nil {
		known[r] = b != nil
	}
	return b != nil, nil
}

// admit adds task id of principal to its index, counted, if the
// principal's counted tasks are fewer than max: running ones of replicas
// that are alive or handed over by a replica that shut down, and ended
// ones whose outcome is not yet fetched.
func (s *sharedTasks) admit(ctx context.Context, principal, id string, created time.Time, max int) error {
	return s.updateIndex(ctx, principal, func(idx *taskIndex) error {
		known := map[string]bool{}
		n := 0
		for _, e := range idx.Tasks {
			if !e.Counted {
				continue
			}
			if e.Expires.IsZero() && e.Replica != "" { // "": handed over, runs at its server
				if ok, err := s.alive(ctx, e.Replica, known); err != nil {
					return err
				} else if !ok {
					continue
				}
			}
			n++
		}
		if n >= max {
			return &jsonrpc.Error{Code: CodeTooManyTasks, Message: fmt.Sprintf("you have %d tasks running or with results not yet fetched, the most the gateway keeps for one principal; fetch or cancel one first", max)}
		}
		// Ended tasks that no longer count: the oldest go past max.
		var ended []int
		for i, e := range idx.Tasks {
			if !e.Counted {
				ended = append(ended, i)
			}
		}
		if len(ended) >= max {
			drop := map[int]bool{}
			for _, i := range ended[:len(ended)-max+1] {
				drop[i] = true
			}
			kept := idx.Tasks[:0]
			for i, e := range idx.Tasks {
				if !drop[i] {
					kept = append(kept, e)
				}
			}
			idx.Tasks = kept
		}
		idx.Tasks = append(idx.Tasks, indexEntry{ID: id, Created: created, Replica: s.replica, Counted: true})
		return nil
	})
}

// beat writes this replica's liveness record.
func (s *sharedTasks) beat(ctx context.Context) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	return s.store.SaveTask(ctx, replicaKey(s.replica), []byte(`{}`), replicaTTL)
}

// stop deletes this replica's liveness record.
func (s *sharedTasks) stop(ctx context.Context) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	return s.store.DeleteTask(ctx, replicaKey(s.replica))
}

// errTaskLost is the error of a task the gateway ran itself whose replica
// stopped before the call ended.
func errTaskLost(id string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeCallInterrupted, Message: fmt.Sprintf("task %q: the gateway replica running the call stopped before it ended; whether the server ran it is unknown, and the gateway does not run it again: repeat the call if it is safe to", id)}
}

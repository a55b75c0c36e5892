package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/gateway/internal/subject"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The gateway's tasks. A client that asks for a task (the "task" member
// of a 2025-11-25 tools/call) or declares the 2026-07-28 Tasks extension
// and calls a server that has Tasks gets a task of the gateway's: the
// call runs in the background on the server's client, which makes it a
// task of the server's when the server has Tasks (and follows it: the
// server's id stays inside the gateway) and a plain call otherwise. The
// gateway's task id names the server and is bound to the principal that
// made it: another principal's requests about it are answered "unknown
// task". Tasks live in the gateway's memory, and with TaskOptions.Store
// in a store shared by replicas too (tasks_shared.go).

// TaskOptions bounds the tasks the gateway keeps (Options.Tasks).
type TaskOptions struct {
	// MaxPerPrincipal is how many tasks one principal may have at once,
	// running or with a result not yet fetched (default 64). Past it a
	// request for a task is refused with CodeTooManyTasks.
	MaxPerPrincipal int
	// TTL is how long a finished task's result is kept when the client
	// does not fetch it (default 10 minutes; a 2025-11-25 client's "ttl"
	// may shorten it). A fetched result is kept one minute more.
	TTL time.Duration
	// PollInterval is the interval advised to clients (default 200ms).
	PollInterval time.Duration
	// Store, if set, keeps a record of every task shared by replicas, so
	// that any replica answers any request about it (tasks_shared.go);
	// the redisstore and pgstore modules' TaskStore types implement it.
	// nil keeps tasks in this process.
	Store TaskStore
	// StoreTimeout bounds each Store operation; zero means
	// DefaultSessionStoreTimeout.
	StoreTimeout time.Duration
}

// CodeTooManyTasks is the JSON-RPC error code of a request for a task
// past TaskOptions.MaxPerPrincipal.
const CodeTooManyTasks = -32014

const fetchedGrace = time.Minute

func (o *TaskOptions) max() int {
	if o == nil || o.MaxPerPrincipal <= 0 {
		return 64
	}
	return o.MaxPerPrincipal
}

func (o *TaskOptions) ttl() time.Duration {
	if o == nil || o.TTL <= 0 {
		return 10 * time.Minute
	}
	return o.TTL
}

func (o *TaskOptions) poll() time.Duration {
	if o == nil || o.PollInterval <= 0 {
		return 200 * time.Millisecond
	}
	return o.PollInterval
}

// Task statuses.
const (
	stWorking   = "working"
	stInput     = "input_required"
	stCompleted = "completed"
	stFailed    = "failed"
	stCancelled = "cancelled"
)

func terminal(status string) bool {
	return status == stCompleted || status == stFailed || status == stCancelled
}

// gwTask is one task of the gateway.
type gwTask struct {
	id, principal, server, tool string
	ext                         bool               // made for a 2026-07-28 client: answered in the extension's form
	session                     *mcp.ServerSession // that made it: lists it when there is no principal
	created                     time.Time
	ttl                         time.Duration
	cancel                      context.CancelCauseFunc
	counted                     bool          // against its principal's cap (taskStore.mu)
	done                        chan struct{} // closed when the background call has returned
	made                        chan struct{} // closed when the server made a task of its own
	rec                         *taskRecord   // a task another replica runs or ran: its record (TaskOptions.Store)
	sessionID                   string        // of session
	shared                      *sharedTasks  // TaskOptions.Store, for a task this replica runs

	mu      sync.Mutex
	status  string
	message string
	updated time.Time
	result  *mcp.CallToolResult
	err     *jsonrpc.Error
	remote  string // the server's own task id
	handle  *mcpadapter.TaskHandle
	asks    []*taskQuestion // the server's questions waiting for the client
	seq     int
	keys    string        // starts the keys of its questions ("q" when empty)
	expires time.Time     // zero while it runs
	wake    chan struct{} // closed and replaced on every change
	unsaved bool          // its end is not in the task store yet: runBeats writes it (TaskOptions.Store)
	handed  bool          // a server's own task handed over to the other replicas by close: its record is theirs
	handoff chan struct{} // closed by taskStore.wait for a task handed over: its questions wait no more
	// away says another replica adopted this server's own task (its
	// record names that replica): this one lets go of it (letGo).
	away   bool
	detach chan struct{} // closed by letGo: the call stops following the task without cancelling it
}

// taskQuestion is a question of the server's task for the client.
type taskQuestion struct {
	key    string
	params *mcp.ElicitParams
	answer chan *mcp.ElicitResult // buffered: one answer
}

// changed records a change; t.mu is held.
func (t *gwTask) changed() {
	t.updated = time.Now()
	close(t.wake)
	t.wake = make(chan struct{})
}

// snapshot returns what a view of t shows.
func (t *gwTask) snapshot() (status, msg string, updated time.Time, res *mcp.CallToolResult, err *jsonrpc.Error, asks []*taskQuestion, wake chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status, t.message, t.updated, t.result, t.err, slices.Clone(t.asks), t.wake
}

// finish records the outcome of the background call.
func (t *gwTask) finish(res *mcp.CallToolResult, err error, ttl time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.asks = nil
	t.expires = time.Now().Add(ttl)
	if terminal(t.status) {
		t.changed()
		return // cancelled already
	}
	switch {
	case err == nil:
		t.status, t.result = stCompleted, res
	case errors.Is(err, errTaskCancelled) || errors.As(err, new(*mcpadapter.TaskCancelledError)):
		t.status, t.message = stCancelled, "cancelled"
	default:
		t.status, t.err = stFailed, taskRPCError(err)
		t.message = t.err.Message
	}
	t.changed()
}

// taskRPCError is the JSON-RPC error a failed task shows.
func taskRPCError(err error) *jsonrpc.Error {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

var errTaskCancelled = errors.New("the client cancelled the task")

// setRemote records the server's own task (OnTask).
func (t *gwTask) setRemote(h mcpadapter.TaskHandle) {
	t.mu.Lock()
	first := t.remote == ""
	t.remote, t.handle = h.TaskID, &h
	t.mu.Unlock()
	if first {
		close(t.made)
	}
}

// ask puts a question of the server's task to the client and waits for
// its answer, or for the task (ctx) to end.
func (t *gwTask) ask(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	q := &taskQuestion{params: p, answer: make(chan *mcp.ElicitResult, 1)}
	t.mu.Lock()
	var detach <-chan struct{}
	if t.handle == nil || t.handle.Protocol != mcpadapter.TaskProtocolCore {
		// A 2025-11-25 server's question waits on: the server asks
		// it in a tasks/result exchange, which an error would end.
		detach = t.detach
	}
	t.seq++
	q.key = t.keys + "q" + strconv.Itoa(t.seq)
	t.asks = append(t.asks, q)
	t.status, t.message = stInput, "waiting for the client's answer"
	t.changed()
	t.mu.Unlock()
	if sh := t.shared; sh != nil {
		_ = sh.sync(ctx, t) // runBeats writes it again if this fails
	}
	defer func() {
		t.mu.Lock()
		t.asks = slices.DeleteFunc(t.asks, func(x *taskQuestion) bool { return x == q })
		if t.status == stInput && len(t.asks) == 0 {
			t.status, t.message = stWorking, ""
			t.changed()
		}
		t.mu.Unlock()
	}()
	select {
	case r := <-q.answer:
		return r, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-t.handoff:
		return nil, errTaskHandedOver
	case <-detach:
		return nil, errTaskHandedOver
	}
}

// answer hands the client's answer to the question key; it reports
// whether a question waited for it.
func (t *gwTask) answer(key string, r *mcp.ElicitResult) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.answerLocked(key, r)
}

// answerLocked is answer with t.mu held.
func (t *gwTask) answerLocked(key string, r *mcp.ElicitResult) bool {
	for _, q := range t.asks {
		if q.key == key {
			select {
			case q.answer <- r:
				return true
			default:
				return false
			}
		}
	}
	return false
}

type taskKey struct{}

// taskFrom returns the gateway task a background call's context runs.
func taskFrom(ctx context.Context) *gwTask {
	t, _ := ctx.Value(taskKey{}).(*gwTask)
	return t
}

type syncOriginKey struct{}

// taskStore holds the gateway's tasks.
type taskStore struct {
	g    *Gateway
	opts *TaskOptions
	sh   *sharedTasks   // TaskOptions.Store; nil: none
	wg   sync.WaitGroup // the background calls, and runBeats
	quit chan struct{}  // closed by wait: runBeats ends
	beat sync.Once

	mu     sync.Mutex
	closed bool
	// handed are the servers' own tasks close handed over to the other
	// replicas, and those letGo let go of (TaskOptions.Store); wait ends
	// their calls here.
	handed []*gwTask
	tasks  map[string]*gwTask
	count  map[string]int       // by principal
	tries  map[string]*adoptTry // adopted tasks whose server was not reached, by id (tasks_adopt.go)
}

func newTaskStore(g *Gateway) *taskStore {
	return &taskStore{g: g, opts: g.opts.Tasks, sh: newSharedTasks(g.opts.Tasks), quit: make(chan struct{}), tasks: make(map[string]*gwTask), count: make(map[string]int), tries: make(map[string]*adoptTry)}
}

// run starts writing this replica's liveness record, and looking at the
// records of the tasks it runs (with a store):
// Gateway.Start calls it.
func (s *taskStore) run() {
	if s.sh == nil {
		return
	}
	s.beat.Do(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed {
			return
		}
		if err := s.sh.beat(s.g.ctx); err != nil {
			s.g.log.Warn("the task store failed: this replica's liveness record was not written", "err", err)
		}
		s.wg.Add(2)
		go s.runLiveness()
		go s.runBeats()
	})
}

// sweep forgets the tasks whose result has expired; s.mu is held.
func (s *taskStore) sweep(now time.Time) {
	for id, t := range s.tasks {
		t.mu.Lock()
		gone := !t.expires.IsZero() && now.After(t.expires)
		t.mu.Unlock()
		if gone {
			delete(s.tasks, id)
			s.uncount(t)
		}
	}
}

// uncount takes t off its principal's count; s.mu is held.
func (s *taskStore) uncount(t *gwTask) {
	if !t.counted {
		return
	}
	t.counted = false
	if s.count[t.principal]--; s.count[t.principal] <= 0 {
		delete(s.count, t.principal)
	}
}

// trim forgets principal's oldest tasks that no longer count against the
// cap (cancelled, or with their outcome fetched) so that fewer than max
// of them are kept: a client that makes and ends tasks as fast as it can
// holds at most twice its cap; s.mu is held.
func (s *taskStore) trim(principal string, max int) {
	var ended []*gwTask
	for _, t := range s.tasks {
		if t.principal == principal && !t.counted {
			ended = append(ended, t)
		}
	}
	if len(ended) < max {
		return
	}
	slices.SortFunc(ended, func(a, b *gwTask) int { return a.created.Compare(b.created) })
	for _, t := range ended[:len(ended)-max+1] {
		delete(s.tasks, t.id)
	}
}

// start makes a task for principal, in session ss, that calls the tool r
// with args (as the client wrote them) in the background. ttl, if positive, is what
// the client asked to keep it for; audit, if not nil, is the call's
// audit record. ctx is the context of the client's request that makes the
// task: with Options.Telemetry, the task's run is an operation of its own
// ("tasks/run") in the request's trace.
func (s *taskStore) start(ctx context.Context, principal string, ss *mcp.ServerSession, r toolRoute, args json.RawMessage, ext bool, ttl time.Duration, audit *auditCall, urlAsk bool) (*gwTask, error) {
	observe := s.g.taskRun(ctx, principal, ss, r)
	if ttl <= 0 || ttl > s.opts.ttl() {
		ttl = s.opts.ttl()
	}
	now := time.Now()
	t := &gwTask{id: r.u.name + "." + newKey(), principal: principal, session: ss, sessionID: sessionIDOf(ss), shared: s.sh, server: r.u.name, tool: r.tool.OriginalName, ext: ext,
		created: now, updated: now, ttl: ttl, status: stWorking, done: make(chan struct{}), made: make(chan struct{}), wake: make(chan struct{}), handoff: make(chan struct{}), detach: make(chan struct{})}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errShuttingDown()
	}
	s.sweep(now)
	if max := s.opts.max(); s.count[principal] >= max {
		s.mu.Unlock()
		return nil, &jsonrpc.Error{Code: CodeTooManyTasks, Message: fmt.Sprintf("you have %d tasks running or with results not yet fetched, the most the gateway keeps for one principal; fetch or cancel one first", max)}
	}
	if s.sh != nil {
		s.mu.Unlock()
		if err := s.share(ctx, t, ss); err != nil {
			return nil, err
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			s.forgetShared(ctx, t)
			return nil, errShuttingDown()
		}
	}
	s.trim(principal, s.opts.max())
	s.tasks[t.id] = t
	s.count[principal]++
	t.counted = true
	parent := s.g.ctx
	if s.sh != nil {
		// The gateway's end does not end the call: close hands it over
		// or stops it (tasks_handover.go).
		parent = context.WithoutCancel(parent)
	}
	tctx, cancel := context.WithCancelCause(parent)
	t.cancel = cancel
	s.wg.Add(1)
	s.mu.Unlock()
	tctx = context.WithValue(withPrincipal(tctx, principal), taskKey{}, t)
	// The client's access token goes with its task (credentials.go): a
	// server whose credential is per principal gets the task's call with
	// a token exchanged for it.
	tctx = subject.With(tctx, subject.From(ctx))
	go func() {
		ctx := tctx
		defer s.wg.Done()
		defer close(t.done)
		defer cancel(nil)
		finished := false
		defer func() {
			if p := recover(); p != nil {
				s.g.logPanic(p, "running a task")
				if !finished {
					t.finish(nil, errInternal, ttl)
				}
			}
		}()
		var res *mcp.CallToolResult
		var err error
		if observe != nil {
			var end func(mcpadapter.ServerOperationResult)
			ctx, end = observe(ctx)
			defer func() {
				end(mcpadapter.NewServerOperationResult(s.g.red.err(err), err == nil && res != nil && res.IsError))
			}()
		}
		res, err = s.g.runTaskSignedIn(ctx, t, urlAsk, r, args, func(h mcpadapter.TaskHandle) {
			t.setRemote(h)
			if s.sh != nil {
				_ = s.sh.sync(ctx, t) // runBeats writes it again if this fails
			}
		})
		if err != nil && context.Cause(ctx) != nil && errors.Is(context.Cause(ctx), errTaskCancelled) {
			err = errTaskCancelled
		}
		if t.handedOver() {
			// Another replica follows the server's task and writes its end.
			audit.end(ctx, nil, errTaskHandedOver)
			return
		}
		if err != nil && errors.Is(context.Cause(ctx), errTaskStopped) {
			err = errTaskLost(t.id)
		}
		t.finish(res, err, ttl)
		finished = true
		if s.sh != nil {
			s.sh.ended(ctx, t, s.g.log.Warn)
		}
		audit.end(ctx, res, err) // the call's record, written when it ends
	}()
	return t, nil
}

// get returns principal's task id, or the "unknown task" error: also for
// a task of another principal's. With a store, a task this replica does
// not run is read from its record.
func (s *taskStore) get(ctx context.Context, principal, id string) (*gwTask, error) {
	s.mu.Lock()
	s.sweep(time.Now())
	t := s.tasks[id]
	s.mu.Unlock()
	if t == nil && s.sh != nil {
		return s.fromStore(ctx, principal, id)
	}
	if t == nil || t.principal != principal {
		return nil, errUnknownTask(id)
	}
	return t, nil
}

// share records t, which this replica is to run, in the store: in its
// principal's index (where the cap counts it across replicas) and its
// own record.
func (s *taskStore) share(ctx context.Context, t *gwTask, ss *mcp.ServerSession) error {
	if err := s.sh.admit(ctx, t.principal, t.id, t.created, s.opts.max()); err != nil {
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			return we
		}
		s.g.log.Warn("the task store failed; a task is refused", "err", err)
		return errTaskStore()
	}
	if err := s.sh.started(ctx, t, ss); err != nil {
		s.g.log.Warn("the task store failed; a task is refused", "err", err)
		if err := s.sh.dropEntry(ctx, t.principal, t.id); err != nil {
			s.g.log.Warn("a refused task could not be removed from its principal's index", "task", t.id, "err", err)
		}
		return errTaskStore()
	}
	return nil
}

func sessionIDOf(ss *mcp.ServerSession) string {
	if ss == nil {
		return ""
	}
	return ss.ID()
}

func errUnknownTask(id string) *jsonrpc.Error {
	if len(id) > 100 {
		id = id[:100] + "…"
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown task %q", id)}
}

// list returns principal's tasks, oldest first. Without a principal
// (no authorization) every client is the same one, and the ids are what
// keeps one's tasks from another's: a session lists the tasks it made
// only, and a request without a session none.
func (s *taskStore) list(principal string, ss *mcp.ServerSession) []*gwTask {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(time.Now())
	var out []*gwTask
	for _, t := range s.tasks {
		if t.principal == principal && (principal != "" || ss != nil && t.session == ss) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b *gwTask) int { return a.created.Compare(b.created) })
	return out
}

// cancelTask cancels t: its background call ends (the server is told:
// notifications/cancelled, or tasks/cancel for a task of its own).
func (s *taskStore) cancelTask(ctx context.Context, t *gwTask) error {
	if t.rec != nil {
		return s.cancelMirror(ctx, t)
	}
	t.mu.Lock()
	if terminal(t.status) {
		st := t.status
		t.mu.Unlock()
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("task %q is %s already", t.id, st)}
	}
	t.status, t.message = stCancelled, "cancelled by the client"
	t.changed()
	t.mu.Unlock()
	t.cancel(errTaskCancelled)
	s.mu.Lock()
	s.uncount(t)
	s.mu.Unlock()
	if s.sh != nil {
		if err := s.sh.sync(ctx, t); err != nil {
			s.g.log.Warn("a cancel could not be written to the task store", "task", t.id, "err", err)
		}
		if err := s.sh.setEntry(ctx, t.principal, t.id, func(e *indexEntry) { e.Counted = false }); err != nil {
			s.g.log.Warn("a cancel could not be written to its principal's index", "task", t.id, "err", err)
		}
	}
	return nil
}

// fetched records that the client has t's outcome: it no longer counts
// against the cap, and is kept a little longer only.
func (s *taskStore) fetched(ctx context.Context, t *gwTask) {
	if s.sh != nil {
		s.fetchedShared(ctx, t)
	}
	if t.rec != nil {
		return
	}
	t.mu.Lock()
	if e := time.Now().Add(fetchedGrace); !t.expires.IsZero() && e.Before(t.expires) {
		t.expires = e
	}
	t.mu.Unlock()
	s.mu.Lock()
	s.uncount(t)
	s.mu.Unlock()
}

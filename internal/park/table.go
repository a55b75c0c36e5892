package park

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// On a handshake-era connection the server asks its question with an
// elicitation/create request while the tool call is open, and nothing in
// that request says which call asked. So a client lets one call at a
// time be in flight on each such connection (its lane); the others wait.
// When the call in flight asks a question, it is parked: it stays open
// in this process while the user is asked, and the answer is handed to
// the waiting server.
//
// What a call that comes while the call in flight is parked (call B
// behind call A) does depends on whose it is:
//
//   - The same run: B is queued. Begin returns a token naming the
//     lane's state, and B asks nothing. Begun again with that token, B
//     waits until that state changes: A's answer is handed over (B then
//     waits for A to finish, and runs), A is passed over (PassOver), or A
//     ends. B is queued again only when A is parked again (a new
//     question, or the same one unanswered).
//   - Another run of the same principal: the user moved on without
//     answering A. A's question is closed: the server is told "cancel"
//     and A's request is cancelled CloseGrace later, A's question is
//     refused from then on, and B runs as soon as A has ended.
//   - Another principal: B cannot run beside A on one connection (its
//     questions could not be told from A's), and must not wait for
//     another user's answer: Begin fails at once with ErrOtherPrincipal.
//
// Queueing cannot deadlock a caller that resumes A and B at once and
// waits for both: B waits only for something A's resume always does,
// whatever the answer, and A never waits for B.
//
// Every question has its own ID: it takes one answer, checked against
// the question the call is waiting on, and the park timer of one
// question closes that question only.

// CloseGrace is how long a call whose question was closed has to end
// after the server was told "cancel", before its request is cancelled too.
const CloseGrace = 5 * time.Second

// ErrOtherPrincipal refuses a call on a connection whose call in flight,
// made for another principal, waits for its user's answer.
var ErrOtherPrincipal = errors.New("the server's connection is waiting for another principal's answer to a question; a handshake-era server's questions cannot be told apart on one connection, so this call cannot run beside it (use one connection per principal)")

// ErrLaneMoved refuses to send a parked call on another connection than
// its lane's (a lost one was replaced): a question asked there would
// reach no call. Nothing was sent; the caller makes the call again in a
// lane of the new connection.
var ErrLaneMoved = errors.New("the server's connection was replaced before the call was sent")

// NewID returns a new random id for a parked call or a question.
func NewID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Question is one elicitation/create waiting for the user.
type Question struct {
	Params *mcp.ElicitParams
	answer chan *mcp.ElicitResult // buffered: one answer, whoever gives it
}

// Outcome is what a call returned.
type Outcome[R any] struct {
	Res R
	Err error
}

// Call is a call in flight on a lane, with its own goroutine.
type Call[R any] struct {
	ID, Server, Tool string
	Principal, Run   string
	lane             *lane[R]
	questions        chan *Question
	done             chan Outcome[R] // buffered
	ended            chan struct{}   // closed when the call has returned
	cancel           context.CancelFunc

	// Guarded by Table.mu.
	round   int       // the round of the last question asked
	asked   *Question // the open question, or nil
	qid     string    // the open question's ID
	closed  string    // the ID of the question closed without an answer, if any
	timer   *time.Timer
	outcome *Outcome[R] // what the call returned, once it has (finish)
}

// lane admits one call at a time on one connection. Its fields are
// guarded by Table.mu.
type lane[R any] struct {
	cs      *mcp.ClientSession
	users   int // calls in it or entering it
	current *Call[R]
	parked  bool
	epoch   uint64        // counts the changes, for the tokens of queued calls
	changed chan struct{} // closed and replaced on every change
}

func (l *lane[R]) signal() {
	l.epoch++
	close(l.changed)
	l.changed = make(chan struct{})
}

// token names the lane's state for a call queued behind a parked call.
func (l *lane[R]) token() string { return fmt.Sprintf("%s.%d", l.current.ID, l.epoch) }

// Table is the parked-call machinery of one client. mu guards everything
// in it, and the calls' fields Call says it guards.
type Table[R any] struct {
	timeout  time.Duration
	log      *slog.Logger
	describe func(R, error) string

	mu    sync.Mutex
	lanes map[*mcp.ClientSession]*lane[R] // connections with a call in flight
	parks map[string]*Call[R]             // by ID, from start to end
	book  Book[R]
}

// New returns a Table whose questions are closed when nobody answers
// them within timeout. describe says what a call came to (for a
// question's record: "completed", "failed: ...").
func New[R any](timeout time.Duration, log *slog.Logger, describe func(R, error) string) *Table[R] {
	return &Table[R]{timeout: timeout, log: log, describe: describe,
		lanes: make(map[*mcp.ClientSession]*lane[R]), parks: make(map[string]*Call[R])}
}

// NewCall returns a call of server's tool, for principal in run, whose
// questions so far are round.
func NewCall[R any](server, tool, principal, run string, round int) *Call[R] {
	return &Call[R]{ID: NewID(), Server: server, Tool: tool, Principal: principal, Run: run, round: round,
		questions: make(chan *Question), done: make(chan Outcome[R], 1), ended: make(chan struct{})}
}

// sameRun reports whether two calls belong to one run.
func sameRun(a, b string) bool { return a != "" && a == b }

// Begin makes p the call in flight of cs's lane. When the call in flight
// is parked it returns at once with the lane's token instead (p is then
// queued: see the top of this file), unless the lane is still in the
// state after names (the token p got before): then it waits for a
// change. On a token or an error, p is not in the lane.
func (t *Table[R]) Begin(ctx context.Context, cs *mcp.ClientSession, p *Call[R], after string) (queued string, err error) {
	t.mu.Lock()
	l := t.lanes[cs]
	if l == nil {
		l = &lane[R]{cs: cs, changed: make(chan struct{})}
		t.lanes[cs] = l
	}
	l.users++
	t.mu.Unlock()
	p.lane = l
	queued, err = t.enter(ctx, l, p, after)
	if err != nil || queued != "" {
		t.mu.Lock()
		t.drop(l)
		t.mu.Unlock()
	}
	return queued, err
}

// drop removes a user of l; t.mu is held.
func (t *Table[R]) drop(l *lane[R]) {
	l.users--
	if l.users == 0 && l.current == nil {
		delete(t.lanes, l.cs)
	}
}

func (t *Table[R]) enter(ctx context.Context, l *lane[R], p *Call[R], after string) (queued string, err error) {
	for {
		t.mu.Lock()
		if l.current == nil {
			l.current = p
			l.signal()
			t.parks[p.ID] = p
			t.mu.Unlock()
			return "", nil
		}
		if a := l.current; l.parked {
			switch {
			case a.Principal != p.Principal:
				t.mu.Unlock()
				return "", ErrOtherPrincipal
			case !sameRun(a.Run, p.Run):
				t.log.Info("a question nobody answered was closed: another call of the same user was made on its connection", "tool", a.Tool, "round", a.round)
				t.closeQuestion(a, fmt.Sprintf("the user moved on: a call of another run (to %q) was made on the same connection before it was answered; the server was told \"cancel\"", p.Tool))
			default:
				if tok := l.token(); tok != after {
					t.mu.Unlock()
					return tok, nil
				}
			}
		}
		ch := l.changed
		t.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// closeQuestion closes p's open question without the user's answer: the
// server is told "cancel", and its request is cancelled if it has not
// ended CloseGrace later. t.mu is held.
func (t *Table[R]) closeQuestion(p *Call[R], why string) {
	t.book.add(p.Principal, p.qid, &Record[R]{Server: p.Server, Tool: p.Tool, Round: p.round, Reason: why})
	p.asked.answer <- &mcp.ElicitResult{Action: "cancel"}
	p.asked, p.closed, p.qid = nil, p.qid, ""
	if p.timer != nil {
		p.timer.Stop()
	}
	p.lane.parked = false
	p.lane.signal()
	p.timer = time.AfterFunc(CloseGrace, p.cancel)
}

// finish takes p, which has returned o, out of its lane.
func (t *Table[R]) finish(p *Call[R], o Outcome[R]) {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := p.lane
	if p.timer != nil {
		p.timer.Stop()
	}
	p.outcome = &o
	if p.asked != nil {
		// It ended while it waited for the user: the server answered the
		// call without the answer, or the connection was lost.
		t.endedAsking(p, p.qid, o)
		p.asked, p.qid = nil, ""
	}
	if r := t.book.get(p.Principal, p.closed); r != nil {
		r.Now = t.describe(o.Res, o.Err) // what the server did after "cancel"
	}
	if l.current == p {
		l.current, l.parked = nil, false
		l.signal()
	}
	delete(t.parks, p.ID)
	t.drop(l)
}

// endedAsking records that p returned o while its question qid waited
// for the user; t.mu is held.
func (t *Table[R]) endedAsking(p *Call[R], qid string, o Outcome[R]) {
	r := &Record[R]{Server: p.Server, Tool: p.Tool, Round: p.round}
	if o.Err == nil {
		r.Reason, r.Now, r.Result, r.HasResult = "the server answered the call before it was answered", t.describe(o.Res, nil), o.Res, true
	} else {
		r.Ended, _, _ = strings.Cut(o.Err.Error(), "\n")
	}
	t.book.add(p.Principal, qid, r)
}

package park

// Every question a tool call asks has an ID of its own and is answered
// at most once. The Book keeps, for the questions seen answered or
// closed, what became of them, so that a second resume of one (a double
// submit, a retried request, an old checkpoint) can be refused with what
// the record says, and nothing is sent.

// MaxAnswered bounds the questions a Book remembers; the oldest are
// forgotten first.
const MaxAnswered = 10000

// Record is what became of one question.
type Record[R any] struct {
	Server, Tool string
	Round        int
	Action       string // the answer taken; "" when closed without one
	Reason       string // how it was closed without an answer
	Now          string // what the call did after, "" while it runs
	Ended        string // the call failed before the question was answered: why
	// Result is what the server answered when it completed the call
	// without waiting for the question's answer (HasResult); the first
	// resume of the question takes it.
	Result    R
	HasResult bool
}

// Book is a client's record of answered and closed questions, by the
// principal the question was asked for and its ID: a resume reads only
// its own principal's records. Its methods are called with the Table's
// lock held.
type Book[R any] struct {
	byID  map[string]*Record[R]
	order []string // keys, oldest first
}

// bookKey is the key of question id of principal.
func bookKey(principal, id string) string { return principal + "\x00" + id }

func (b *Book[R]) get(principal, id string) *Record[R] {
	if id == "" {
		return nil
	}
	return b.byID[bookKey(principal, id)]
}

// add records a question's fate, forgetting the oldest when full.
func (b *Book[R]) add(principal, id string, r *Record[R]) {
	if id == "" {
		return
	}
	id = bookKey(principal, id)
	if b.byID == nil {
		b.byID = make(map[string]*Record[R])
	}
	if _, ok := b.byID[id]; !ok {
		if len(b.order) >= MaxAnswered {
			delete(b.byID, b.order[0])
			b.order = b.order[1:]
		}
		b.order = append(b.order, id)
	}
	b.byID[id] = r
}

// Take claims question id of principal for an answer summed up as
// action: when the question was answered or closed already, it returns
// its record and claims nothing.
func (t *Table[R]) Take(principal, id, server, tool string, round int, action string) (Record[R], bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.book.get(principal, id); r != nil {
		return *r, false
	}
	t.book.add(principal, id, &Record[R]{Server: server, Tool: tool, Round: round, Action: action})
	return Record[R]{}, true
}

// Settle records what the call did after the answer to question id.
func (t *Table[R]) Settle(principal, id string, res R, err error) {
	now := t.describe(res, err)
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.book.get(principal, id); r != nil {
		r.Now = now
	}
}

// Recorded returns the record of question id of principal. The result
// it carries is taken: later calls return the record without it.
func (t *Table[R]) Recorded(principal, id string) (Record[R], bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.book.get(principal, id)
	if r == nil {
		return Record[R]{}, false
	}
	rec := *r
	var zero R
	r.Result, r.HasResult = zero, false // returned once
	return rec, true
}

package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A server's question to a handshake-era client (elicitation/create,
// sampling/createMessage, roots/list) is a JSON-RPC request of the
// session's go-sdk copy on the replica that asks it, numbered by that
// copy from 1. Every copy of a session numbers alike (two replicas, or
// one replica that drops its copy and makes it again), so the gateway
// gives each copy a token of its own (random, 26 characters of base32,
// made when the replica holds the copy) and the client sees question n
// of that copy as the string id "TOKEN.n" (askID): the writer of the
// copy's streams (askIDWriter) rewrites the id of each request the copy
// sends, and the requestId of each notifications/cancelled it sends for
// one, also in the events replayed to a client that resumes a stream. An
// id is thus used once in a session, and says which copy asked.
//
// Each replica records the questions it asks (their ids, itself, until
// when they can wait) in the session's record as go-sdk writes them to
// the event store, which is before the client can see them. Every
// question the gateway puts to a client waits for its answer no longer
// than Options.ParkTimeout (askBound), so a recorded question counts
// until ParkTimeout (of the replica that asked it) plus askMargin, and no
// longer.
//
// A replica that gets an answer (a JSON-RPC response in a POST of a
// shared session) reads its id. An id naming this replica's copy of the
// POST's session, and a question of it still waiting, is put back to the
// copy's number and the answer passed to the copy. An id that the
// session's record has as a question another replica asked is handed to
// that replica through the record (sessions_handed.go): the question is
// taken out of the record and the answer put in, and the replica that
// asked, which reads the records of its sessions with questions waiting
// when the store's notice of the change comes (sessions_notices.go), or
// at its next poll, gives it to its question. Any other answer (a number,
// an id of another form, of another session, of a copy that ended, of a
// question answered or withdrawn) is dropped (the POST is answered 202,
// as go-sdk answers one for a question it does not have).

// maxSharedAsks bounds the questions a session's record keeps; the
// oldest are forgotten first (their answers are then dropped).
const maxSharedAsks = 256

// askMargin is how long past its bound a recorded question still
// counts: room for the clocks of the replicas to differ, and for an
// answer under way when the question's bound came.
const askMargin = 2 * time.Second

// sharedAsk is a question a replica asked a session's client.
type sharedAsk struct {
	ID      string    `json:"id"`      // the id the client sees (askID)
	Replica string    `json:"replica"` // the replicaToken of the replica that asked
	Until   time.Time `json:"until"`   // when it stops waiting at the latest
}

// askBound bounds a question the gateway puts to a client (of what
// kind) by ParkTimeout: the screen of answers (live) counts a recorded
// question no longer.
func (g *Gateway) askBound(ctx context.Context, kind string) (context.Context, context.CancelFunc) {
	d := g.opts.parkTimeout()
	return context.WithTimeoutCause(ctx, d, fmt.Errorf("the client did not answer the gateway's %s request within %s", kind, d))
}

// live reports whether a question that waits until until can still be
// waiting at now.
func live(until, now time.Time) bool { return now.Before(until.Add(askMargin)) }

// maxAskNumber is the highest number of a copy's question the ids of
// answers are read with (go-sdk numbers from 1, one a request).
const maxAskNumber = 1 << 53

// askID is the id the client sees of question n of the copy of a
// session whose token is tok.
func askID(tok string, n int64) string { return tok + "." + strconv.FormatInt(n, 10) }

// parseAskID reads an id askID made: the copy's token and its number;
// ok is false for any other string (a number written otherwise, too).
func parseAskID(id string) (tok string, n int64, ok bool) {
	tok, num, found := strings.Cut(id, ".")
	if !found || !validSessionID(tok) {
		return "", 0, false
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 1 || n > maxAskNumber || strconv.FormatInt(n, 10) != num {
		return "", 0, false
	}
	return tok, n, true
}

// outgoing reads a message a session's copy writes, as go-sdk wrote it:
// question n (a request numbered n), or its withdrawal (a
// notifications/cancelled with requestId n); n is 0 for anything else.
// Only a message that begins as go-sdk writes those (its members in the
// order jsonrpc, id, method: jsonrpc.EncodeMessage) is read whole: the
// others (answers, notifications such as progress) pass at the cost of
// a look at their first bytes.
func outgoing(data []byte) (msg *jsonrpc.Request, n int64, withdrawal bool) {
	if !mayAsk(data) {
		return nil, 0, false
	}
	m, err := jsonrpc.DecodeMessage(data)
	req, ok := m.(*jsonrpc.Request)
	if err != nil || !ok {
		return nil, 0, false
	}
	if req.ID.IsValid() {
		n, _ := req.ID.Raw().(int64)
		return req, max(n, 0), false
	}
	if req.Method != "notifications/cancelled" {
		return nil, 0, false
	}
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return nil, 0, false
	}
	f, ok := p.RequestID.(float64)
	if !ok || f < 1 || f != float64(int64(f)) {
		return nil, 0, false
	}
	return req, int64(f), true
}

// mayAsk reports whether data, as go-sdk writes a message, can be a
// request numbered by the copy or a notifications/cancelled.
func mayAsk(data []byte) bool {
	const head = `{"jsonrpc":"2.0",`
	rest, ok := bytes.CutPrefix(data, []byte(head))
	if !ok {
		return false
	}
	if bytes.HasPrefix(rest, []byte(`"method":"notifications/cancelled"`)) {
		return true
	}
	rest, ok = bytes.CutPrefix(rest, []byte(`"id":`))
	if !ok {
		return false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	return i > 0 && bytes.HasPrefix(rest[i:], []byte(`,"method":`))
}

// rewriteOutgoing returns data, a message of a session's copy whose
// token is tok, with the id of its question (or the requestId of its
// withdrawal) the client's (askID); ok is false when data is neither.
func rewriteOutgoing(tok string, data []byte) ([]byte, bool) {
	req, n, withdrawal := outgoing(data)
	if n == 0 {
		return nil, false
	}
	id := askID(tok, n)
	if withdrawal {
		var params map[string]json.RawMessage
		if json.Unmarshal(req.Params, &params) != nil {
			return nil, false
		}
		params["requestId"], _ = json.Marshal(id)
		b, err := json.Marshal(params)
		if err != nil {
			return nil, false
		}
		req.Params = b
	} else {
		req.ID, _ = jsonrpc.MakeID(id)
	}
	b, err := jsonrpc.EncodeMessage(req)
	return b, err == nil
}

// askIDWriter writes the answer to an HTTP request of shared session id
// with the ids of the copy's questions rewritten (rewriteOutgoing).
// go-sdk writes each event of a stream with one Write (writeEvent), the
// events replayed to a resuming client too; what is not such an event
// (an SSE comment, an error's text) passes as it is. The stateful
// handler answers with event streams only (its JSONResponse is false).
type askIDWriter struct {
	http.ResponseWriter
	s      *sharedSessions
	id     string
	status int // the status written, 0 until one is
}

// WriteHeader implements http.ResponseWriter, recording the status.
func (w *askIDWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// refused reports whether the answer written was an error status: the
// POST's requests were refused before they ran.
func (w *askIDWriter) refused() bool { return w.status >= 300 }

// Write implements http.ResponseWriter.
func (w *askIDWriter) Write(b []byte) (int, error) {
	if out, ok := w.rewrite(b); ok {
		if _, err := w.ResponseWriter.Write(out); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// rewrite returns event b with its data rewritten, when it has data to
// rewrite.
func (w *askIDWriter) rewrite(b []byte) ([]byte, bool) {
	if !bytes.HasSuffix(b, []byte("\n\n")) {
		return nil, false
	}
	start := 0
	if !bytes.HasPrefix(b, []byte("data: ")) {
		i := bytes.Index(b, []byte("\ndata: "))
		if i < 0 {
			return nil, false
		}
		start = i + 1
	}
	data := b[start+len("data: ") : len(b)-2]
	if !mayAsk(data) || bytes.IndexByte(data, '\n') >= 0 {
		return nil, false
	}
	tok := w.s.copyToken(w.id)
	if tok == "" {
		return nil, false
	}
	data, ok := rewriteOutgoing(tok, data)
	if !ok {
		return nil, false
	}
	out := make([]byte, 0, start+len("data: ")+len(data)+2)
	out = append(out, b[:start+len("data: ")]...)
	out = append(out, data...)
	return append(out, "\n\n"...), true
}

// Flush implements http.Flusher, through the writers the wrapped one
// wraps too.
func (w *askIDWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// Unwrap gives http.ResponseController the writer wrapped.
func (w *askIDWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// noteOutgoing records a question session id asks here, or forgets one
// it withdraws; go-sdk calls it (through the event store's Append)
// before the message reaches the client, with the context of the
// question (whose values are those of the client's request it goes
// with: its principal).
func (s *sharedSessions) noteOutgoing(ctx context.Context, id string, data []byte, warn func(string, ...any)) {
	_, n, withdrawal := outgoing(data)
	if n == 0 {
		return
	}
	tok := s.copyToken(id)
	if tok == "" {
		return
	}
	ask := askID(tok, n)
	ctx = context.WithoutCancel(ctx)
	now := time.Now().UTC()
	until := now.Add(s.park)
	if withdrawal {
		s.unwait(id, ask)
	} else {
		s.wait(ctx, id, ask, until)
	}
	err := s.update(ctx, id, func(rec *sessionRecord) {
		if withdrawal {
			rec.Asks = dropAsk(rec.Asks, ask)
			rec.Handed = dropHanded(rec.Handed, ask)
			return
		}
		rec.Asks = s.addAsk(rec.Asks, ask, until, now)
		rec.Handed = slices.DeleteFunc(rec.Handed, func(h handedAnswer) bool { return !live(h.Ask.Until, now) })
	})
	if err != nil && !withdrawal {
		warn("a question to a client could not be recorded in the session store; its answer is dropped if it reaches another replica", "err", err)
	}
}

// addAsk adds this replica's question id, waiting until until, to asks,
// forgetting the questions that can no longer be waiting at now and the
// oldest over maxSharedAsks.
func (s *sharedSessions) addAsk(asks []sharedAsk, id string, until, now time.Time) []sharedAsk {
	kept := slices.DeleteFunc(slices.Clone(asks), func(a sharedAsk) bool { return !live(a.Until, now) || a.ID == id })
	kept = append(kept, sharedAsk{ID: id, Replica: s.replicaToken, Until: until})
	if len(kept) > maxSharedAsks {
		kept = kept[len(kept)-maxSharedAsks:]
	}
	return kept
}

// forgetEnded drops from rec the questions, and the answers handed to
// questions, that can no longer be waiting at now: every write of a
// record does, so those of a replica that died or closed leave it with
// its next write (a question, an answer, its renewal).
func (rec *sessionRecord) forgetEnded(now time.Time) {
	rec.Asks = slices.DeleteFunc(rec.Asks, func(a sharedAsk) bool { return !live(a.Until, now) })
	rec.Handed = slices.DeleteFunc(rec.Handed, func(h handedAnswer) bool { return !live(h.Ask.Until, now) })
}

// dropAsk returns asks without question id.
func dropAsk(asks []sharedAsk, id string) []sharedAsk {
	return slices.DeleteFunc(asks, func(a sharedAsk) bool { return a.ID == id })
}

// dropHanded returns handed without the answers to question id: an
// answer to it handed by another replica while the client's answer
// reached this one too, or while the question was withdrawn, is not left
// in the record.
func dropHanded(handed []handedAnswer, id string) []handedAnswer {
	return slices.DeleteFunc(handed, func(h handedAnswer) bool { return h.Ask.ID == id })
}

// otherAsk returns question id of rec when another replica asked it and
// it can still be waiting.
func (s *sharedSessions) otherAsk(rec *sessionRecord, id string) (sharedAsk, bool) {
	now := time.Now()
	for _, a := range rec.Asks {
		if a.ID == id {
			return a, a.Replica != s.replicaToken && live(a.Until, now)
		}
	}
	return sharedAsk{}, false
}

// screened is what filterAnswers makes of a POST's body.
type screened struct {
	kept     []byte         // the body to serve; nil: nothing is left
	answered []string       // the ids of the answers kept, to this replica's questions
	handed   []handedAnswer // the answers to hand to the replicas that asked
	dropped  bool           // an answer was dropped
	answers  bool           // the body holds answers
	// batch: the body is a batch; unreadable: a message of the batch is
	// not JSON-RPC (go-sdk refuses such a batch whole, sessions_refused.go);
	// others: the body holds messages other than answers.
	batch, unreadable, others bool
}

// filterAnswers screens body, a POST of shared session id whose record
// is rec: the answers (JSON-RPC responses) to questions of this
// replica's copy of the session that still wait are kept, with the
// copy's own ids; those to a question another replica asked are to be
// handed to it, with that replica's copy's ids; the others are dropped.
// The messages are read as go-sdk reads them (jsonrpc.DecodeMessage:
// keys matched exactly, data after a message ignored), and a body with an
// answer is written again from what was read, so go-sdk (here or on the
// replica handed an answer) is given only the answers screened here. A
// body that is not JSON-RPC is kept as it is (go-sdk says what is wrong
// with it).
func (s *sharedSessions) filterAnswers(id string, rec *sessionRecord, body []byte) screened {
	if _, ok := readEnvelope(body); ok {
		// One tools/call request, read as go-sdk reads it: no answer
		// (and no 32 KB decoder made for it).
		return screened{others: true, kept: body}
	}
	var raws []json.RawMessage
	batch := json.NewDecoder(bytes.NewReader(body)).Decode(&raws) == nil
	if !batch {
		raws = []json.RawMessage{body}
	}
	out := screened{batch: batch}
	tok := s.copyToken(id)
	var msgs []json.RawMessage
	for _, raw := range raws {
		msg, err := jsonrpc.DecodeMessage(raw)
		resp, ok := msg.(*jsonrpc.Response)
		if err != nil || !ok {
			out.unreadable = out.unreadable || batch && err != nil
			out.others = true
			msgs = append(msgs, raw)
			continue
		}
		out.answers = true
		ask, _ := resp.ID.Raw().(string)
		asker, n, ok := parseAskID(ask)
		if !ok {
			out.dropped = true
			continue
		}
		resp.ID, _ = jsonrpc.MakeID(float64(n)) // exact: n <= maxAskNumber
		b, err := jsonrpc.EncodeMessage(resp)
		switch {
		case err != nil:
			out.dropped = true
		case asker == tok && s.isWaiting(id, ask):
			out.answered = append(out.answered, ask)
			msgs = append(msgs, b)
		default:
			if a, ok := s.otherAsk(rec, ask); ok && len(b) <= maxHandedAnswer {
				out.handed = append(out.handed, handedAnswer{Ask: a, Msg: b})
			} else {
				out.dropped = true
			}
		}
	}
	switch {
	case !out.answers:
		out.kept = body
	case len(msgs) == 0:
	case !batch:
		out.kept = msgs[0]
	default:
		out.kept, _ = json.Marshal(msgs)
	}
	return out
}

// screenAnswers screens the body of a POST of shared session id
// (filterAnswers): it forgets the questions of the answers it keeps,
// hands the answers to other replicas' questions to them through the
// session's record, and drops the others; a POST with answers that
// go-sdk refuses whole it refuses as go-sdk does (sessions_refused.go).
// It returns the body to serve, or nil when nothing is left to serve (the
// POST has been answered).
func (g *Gateway) screenAnswers(w http.ResponseWriter, r *http.Request, id string, rec *sessionRecord, body []byte) []byte {
	s := g.shared
	sc := s.filterAnswers(id, rec, body)
	if code, msg := refusal(r, sc); sc.answers && code != 0 {
		http.Error(w, msg, code)
		return nil
	}
	if sc.dropped {
		g.log.Warn("a client's answer was dropped: its id names no question waiting in the session")
	}
	for _, a := range sc.answered {
		s.unwait(id, a)
	}
	if len(sc.answered) > 0 || len(sc.handed) > 0 {
		var lost int
		err := s.update(r.Context(), id, func(rec *sessionRecord) {
			for _, a := range sc.answered {
				rec.Asks = dropAsk(rec.Asks, a)
				rec.Handed = dropHanded(rec.Handed, a)
			}
			lost = s.hand(rec, sc.handed)
		})
		switch {
		case err != nil && len(sc.handed) > 0:
			g.log.Warn("the session store failed to take a client's answer to another replica's question; the question ends by its timeout", "err", err)
		case err != nil:
			g.log.Warn("the session store failed to forget an answered question", "err", err)
		case lost > 0:
			g.log.Warn("a client's answer to another replica's question was dropped: the question was answered or withdrawn meanwhile", "answers", lost)
		}
		if err == nil && lost < len(sc.handed) {
			g.notify(r.Context(), id) // the replicas that asked take their answers
		}
	}
	if sc.kept == nil {
		w.WriteHeader(http.StatusAccepted)
		return nil
	}
	return sc.kept
}

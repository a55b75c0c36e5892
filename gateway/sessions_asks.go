package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A server's question to a handshake-era client (elicitation/create,
// sampling/createMessage, roots/list) is a JSON-RPC request of the
// session's go-sdk copy on the replica that asks it, numbered by that
// copy: two replicas holding one shared session number their questions
// alike, so the id of a client's answer does not say which replica's
// question it answers. Each replica records the questions it asks
// (their ids, itself, until when they can wait) in the session's record
// as go-sdk writes them to the event store, which is before the client
// can see them. Every question the gateway puts to a client waits for
// its answer no longer than Options.ParkTimeout (askBound), so a
// recorded question counts until ParkTimeout (of the replica that asked
// it) plus askMargin after it was recorded, and no longer: a replica
// that died without forgetting its questions holds back no answer past
// that.
//
// A replica that gets an answer (a JSON-RPC response in a POST of a
// shared session) passes it to its copy of the session when the record
// has a question with the answer's id asked by it and by no other
// replica. When the one question with that id was asked by another
// replica, the answer is handed to that replica through the record
// (sessions_handed.go): the question is taken out of the record and the
// answer put in, and the replica that asked, which reads the records of
// its sessions with questions waiting every answerPoll, gives it to its
// question. Otherwise (no question with that id, or several replicas'
// questions) the answer is dropped (the POST is answered 202, as go-sdk
// answers one for a question it does not have) and the question it was
// for ends by its own timeout or cancellation. An answer is never given
// to a question it was not for while that question waits; an answer to a
// question that ended (withdrawn, or past its bound) reaches the question
// another replica asks later in the session under the same id, as the
// copies' ids are not unique in the session.

// maxSharedAsks bounds the questions a session's record keeps; the
// oldest are forgotten first (their answers are then dropped).
const maxSharedAsks = 256

// closeForgetTimeout bounds how long Gateway.Close spends removing this
// replica's questions from the session store (forgetAsks).
const closeForgetTimeout = 5 * time.Second

// askMargin is how long past its bound a recorded question still
// counts: room for the clocks of the replicas to differ, and for an
// answer under way when the question's bound came.
const askMargin = 2 * time.Second

// sharedAsk is a question a replica asked a session's client.
type sharedAsk struct {
	ID      string    `json:"id"`      // the JSON-RPC id, compact JSON
	Replica string    `json:"replica"` // the replicaToken of the replica that asked
	At      time.Time `json:"at"`
	// Until is when the question stops waiting at the latest (At plus
	// the asking replica's ParkTimeout); zero in records written
	// without it, which are read as At plus this replica's.
	Until time.Time `json:"until,omitzero"`
}

// askBound bounds a question the gateway puts to a client (of what
// kind) by ParkTimeout: the screen of answers (sharedSessions.live)
// counts a recorded question no longer.
func (g *Gateway) askBound(ctx context.Context, kind string) (context.Context, context.CancelFunc) {
	d := g.opts.parkTimeout()
	return context.WithTimeoutCause(ctx, d, fmt.Errorf("the client did not answer the gateway's %s request within %s", kind, d))
}

// live reports whether question a can still be waiting at now.
func (s *sharedSessions) live(a sharedAsk, now time.Time) bool {
	until := a.Until
	if until.IsZero() {
		until = a.At.Add(s.park)
	}
	return now.Before(until.Add(askMargin))
}

// rpcID returns the compact JSON of a JSON-RPC id, "" when there is none.
func rpcID(raw json.RawMessage) string {
	var b bytes.Buffer
	if len(raw) == 0 || json.Compact(&b, raw) != nil || b.String() == "null" {
		return ""
	}
	return b.String()
}

// outgoing reads a message a session writes: the id of a question (a
// request), or the id of a question it withdraws (notifications/cancelled).
func outgoing(data []byte) (asked, withdrawn string) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(data, &m) != nil || m.Method == "" {
		return "", ""
	}
	if id := rpcID(m.ID); id != "" {
		return id, ""
	}
	if m.Method == "notifications/cancelled" {
		return "", rpcID(m.Params.RequestID)
	}
	return "", ""
}

// noteOutgoing records a question session id asks here, or forgets one
// it withdraws; go-sdk calls it (through the event store's Append)
// before the message reaches the client, with the context of the
// question (whose values are those of the client's request it goes
// with: its principal).
func (s *sharedSessions) noteOutgoing(ctx context.Context, id string, data []byte, warn func(string, ...any)) {
	if !bytes.Contains(data, []byte(`"method"`)) {
		return // a response
	}
	asked, withdrawn := outgoing(data)
	if asked == "" && withdrawn == "" {
		return
	}
	ctx = context.WithoutCancel(ctx)
	now := time.Now().UTC()
	if asked != "" {
		s.wait(ctx, id, asked, now)
	} else {
		s.unwait(id, withdrawn)
	}
	err := s.update(ctx, id, func(rec *sessionRecord) {
		if withdrawn != "" {
			rec.Asks = dropAsk(rec.Asks, withdrawn, s.replicaToken)
			rec.Handed = dropHanded(rec.Handed, withdrawn, s.replicaToken)
			return
		}
		rec.Asks = s.addAsk(rec.Asks, asked, now)
		rec.Handed = slices.DeleteFunc(rec.Handed, func(h handedAnswer) bool { return !s.live(h.Ask, now) })
	})
	if err != nil && asked != "" {
		warn("a question to a client could not be recorded in the session store; its answer will be dropped", "err", err)
	}
}

// addAsk adds this replica's question id, asked at now, to asks,
// forgetting the questions that can no longer be waiting and the oldest
// over maxSharedAsks.
func (s *sharedSessions) addAsk(asks []sharedAsk, id string, now time.Time) []sharedAsk {
	kept := asks[:0:0]
	for _, a := range asks {
		if s.live(a, now) && !(a.ID == id && a.Replica == s.replicaToken) {
			kept = append(kept, a)
		}
	}
	kept = append(kept, sharedAsk{ID: id, Replica: s.replicaToken, At: now, Until: now.Add(s.park)})
	if len(kept) > maxSharedAsks {
		kept = kept[len(kept)-maxSharedAsks:]
	}
	return kept
}

// dropAsk returns asks without replica's question id.
func dropAsk(asks []sharedAsk, id, replica string) []sharedAsk {
	kept := asks[:0:0]
	for _, a := range asks {
		if a.ID != id || a.Replica != replica {
			kept = append(kept, a)
		}
	}
	return kept
}

// dropHanded returns handed without the answers to replica's question
// id: an answer to it handed by another replica while the client's
// answer reached this one too, or while the question was withdrawn, is
// not left in the record.
func dropHanded(handed []handedAnswer, id, replica string) []handedAnswer {
	return slices.DeleteFunc(handed, func(h handedAnswer) bool { return h.Ask.ID == id && h.Ask.Replica == replica })
}

// ownAsk reports whether rec has a question with id asked here and none
// asked by another replica, of those that can still be waiting.
func (s *sharedSessions) ownAsk(rec *sessionRecord, id string) bool {
	mine, now := false, time.Now()
	for _, a := range rec.Asks {
		if a.ID != id || !s.live(a, now) {
			continue
		}
		if a.Replica != s.replicaToken {
			return false
		}
		mine = true
	}
	return mine
}

// otherAsk returns the question with id that rec has, when it has one
// only, asked by another replica, that can still be waiting.
func (s *sharedSessions) otherAsk(rec *sessionRecord, id string) (sharedAsk, bool) {
	var found sharedAsk
	n, now := 0, time.Now()
	for _, a := range rec.Asks {
		if a.ID == id && s.live(a, now) {
			found = a
			n++
		}
	}
	return found, n == 1 && found.Replica != s.replicaToken
}

// screened is what filterAnswers makes of a POST's body.
type screened struct {
	kept     []byte         // the body to serve; nil: nothing is left
	answered []string       // the ids of the answers kept, to this replica's questions
	handed   []handedAnswer // the answers to hand to the replicas that asked
	dropped  bool           // an answer was dropped
	answers  bool           // the body holds answers
	// batch: the body is a batch; unreadable: a message of the batch is
	// not JSON-RPC (go-sdk refuses such a batch whole, sessions_refused.go).
	batch, unreadable bool
}

// filterAnswers screens body, a POST of a shared session whose record is
// rec: the answers (JSON-RPC responses) to questions this replica alone
// asked are kept, those to the one question another replica asked with
// their id are to be handed to it, and the others dropped. The messages
// are read as go-sdk reads them (jsonrpc.DecodeMessage: keys matched
// exactly, data after a message ignored), and a body with an answer is
// written again from what was read, so go-sdk (here or on the replica
// handed an answer) is given only the answers screened here. A body
// that is not JSON-RPC is kept as it is (go-sdk says what is wrong with
// it).
func (s *sharedSessions) filterAnswers(rec *sessionRecord, body []byte) screened {
	var raws []json.RawMessage
	batch := json.NewDecoder(bytes.NewReader(body)).Decode(&raws) == nil
	if !batch {
		raws = []json.RawMessage{body}
	}
	out := screened{batch: batch}
	var msgs []json.RawMessage
	for _, raw := range raws {
		msg, err := jsonrpc.DecodeMessage(raw)
		resp, ok := msg.(*jsonrpc.Response)
		if err != nil || !ok {
			out.unreadable = out.unreadable || batch && err != nil
			msgs = append(msgs, raw)
			continue
		}
		out.answers = true
		id := answerID(resp.ID)
		b, err := jsonrpc.EncodeMessage(resp)
		switch {
		case id == "" || err != nil:
			out.dropped = true
		case s.ownAsk(rec, id):
			out.answered = append(out.answered, id)
			msgs = append(msgs, b)
		default:
			if a, ok := s.otherAsk(rec, id); ok && len(b) <= maxHandedAnswer {
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

// answerID returns the id of an answer as a question's id is recorded
// (rpcID of go-sdk's JSON of it), "" when it has none.
func answerID(id jsonrpc.ID) string {
	if !id.IsValid() {
		return ""
	}
	b, err := json.Marshal(id.Raw())
	if err != nil {
		return ""
	}
	return rpcID(b)
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
	sc := s.filterAnswers(rec, body)
	if code, msg := refusal(r, sc); sc.answers && code != 0 {
		http.Error(w, msg, code)
		return nil
	}
	if sc.dropped {
		g.log.Warn("a client's answer was dropped: no question with its id can be waiting, or several replicas of the gateway asked one with that id; the question ends by its timeout")
	}
	for _, a := range sc.answered {
		s.unwait(id, a)
	}
	if len(sc.answered) > 0 || len(sc.handed) > 0 {
		var lost int
		err := s.update(r.Context(), id, func(rec *sessionRecord) {
			for _, a := range sc.answered {
				rec.Asks = dropAsk(rec.Asks, a, s.replicaToken)
				rec.Handed = dropHanded(rec.Handed, a, s.replicaToken)
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
	}
	if sc.kept == nil {
		w.WriteHeader(http.StatusAccepted)
		return nil
	}
	return sc.kept
}

// heldIDs returns the ids of the sessions this replica holds.
func (s *sharedSessions) heldIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.local))
	for id := range s.local {
		ids = append(ids, id)
	}
	return ids
}

// forgetAsks removes this replica's questions from the records of
// sessions ids, which it held until it closed them: their answers can no
// longer reach it, and a replica that makes such a session again numbers
// its questions from 1 again. It gives up at ctx's end.
func (s *sharedSessions) forgetAsks(ctx context.Context, ids []string) error {
	mine := func(a sharedAsk) bool { return a.Replica == s.replicaToken }
	for _, id := range ids {
		rec, err := s.load(ctx, id)
		if err != nil {
			return err
		}
		if rec == nil || !slices.ContainsFunc(rec.Asks, mine) {
			continue
		}
		err = s.update(ctx, id, func(rec *sessionRecord) { rec.Asks = slices.DeleteFunc(rec.Asks, mine) })
		if err != nil && !errors.Is(err, errSessionGone) {
			return err
		}
	}
	return nil
}

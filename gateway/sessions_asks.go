package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
// (their ids, itself) in the session's record as go-sdk writes them to
// the event store, which is before the client can see them. A replica
// passes an answer (a JSON-RPC response in a POST of a shared session)
// to its copy of the session only when the record has a question with
// the answer's id asked by it and by no other replica; otherwise the
// answer is dropped (the POST is answered 202, as go-sdk answers one for
// a question it does not have) and the question it was for ends by its
// own timeout or cancellation. An answer is never given to a question
// it was not for; it reaches its question only when the balancer sends
// it to the replica that asked and no other replica has a question with
// the same id waiting.

// maxSharedAsks bounds the questions a session's record keeps; the
// oldest are forgotten first (their answers are then dropped).
const maxSharedAsks = 256

// closeForgetTimeout bounds how long Gateway.Close spends removing this
// replica's questions from the session store (forgetAsks).
const closeForgetTimeout = 5 * time.Second

// sharedAsk is a question a replica asked a session's client.
type sharedAsk struct {
	ID      string    `json:"id"`      // the JSON-RPC id, compact JSON
	Replica string    `json:"replica"` // the replicaToken of the replica that asked
	At      time.Time `json:"at"`
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
// before the message reaches the client.
func (s *sharedSessions) noteOutgoing(ctx context.Context, id string, data []byte, warn func(string, ...any)) {
	if !bytes.Contains(data, []byte(`"method"`)) {
		return // a response
	}
	asked, withdrawn := outgoing(data)
	if asked == "" && withdrawn == "" {
		return
	}
	ctx = context.WithoutCancel(ctx)
	err := s.update(ctx, id, func(rec *sessionRecord) {
		if withdrawn != "" {
			rec.Asks = dropAsk(rec.Asks, withdrawn, s.replicaToken)
			return
		}
		rec.Asks = s.addAsk(rec.Asks, asked)
	})
	if err != nil && asked != "" {
		warn("a question to a client could not be recorded in the session store; its answer will be dropped", "err", err)
	}
}

// addAsk adds this replica's question id to asks, forgetting questions
// older than the session's lifetime and the oldest over maxSharedAsks.
func (s *sharedSessions) addAsk(asks []sharedAsk, id string) []sharedAsk {
	now := time.Now().UTC()
	kept := asks[:0:0]
	for _, a := range asks {
		if now.Sub(a.At) < s.ttl && !(a.ID == id && a.Replica == s.replicaToken) {
			kept = append(kept, a)
		}
	}
	kept = append(kept, sharedAsk{ID: id, Replica: s.replicaToken, At: now})
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

// ownAsk reports whether rec has a question with id asked here and none
// asked by another replica.
func (s *sharedSessions) ownAsk(rec *sessionRecord, id string) bool {
	mine := false
	for _, a := range rec.Asks {
		if a.ID != id {
			continue
		}
		if a.Replica != s.replicaToken {
			return false
		}
		mine = true
	}
	return mine
}

// filterAnswers returns body without the answers (JSON-RPC responses)
// that are not known to be for this replica's questions of the session
// (ownAsk), the ids of those it keeps, and whether any was dropped. The
// messages are read as go-sdk reads them (jsonrpc.DecodeMessage: keys
// matched exactly, data after a message ignored), and a body with an
// answer is written again from what was read, so go-sdk is given only
// the answers screened here. A body that is not JSON-RPC is returned as
// it is (go-sdk says what is wrong with it); empty is what is left when
// all of it was dropped.
func (s *sharedSessions) filterAnswers(rec *sessionRecord, body []byte) (kept []byte, answered []string, dropped bool) {
	var raws []json.RawMessage
	batch := json.NewDecoder(bytes.NewReader(body)).Decode(&raws) == nil
	if !batch {
		raws = []json.RawMessage{body}
	}
	var out []json.RawMessage
	rewrite := false
	for _, raw := range raws {
		msg, err := jsonrpc.DecodeMessage(raw)
		resp, ok := msg.(*jsonrpc.Response)
		if err != nil || !ok {
			out = append(out, raw)
			continue
		}
		rewrite = true
		id := answerID(resp.ID)
		if id == "" || !s.ownAsk(rec, id) {
			dropped = true
			continue
		}
		b, err := jsonrpc.EncodeMessage(resp)
		if err != nil {
			dropped = true
			continue
		}
		answered = append(answered, id)
		out = append(out, b)
	}
	if !rewrite {
		return body, nil, false
	}
	if len(out) == 0 {
		return nil, nil, true
	}
	if !batch {
		return out[0], answered, dropped
	}
	b, _ := json.Marshal(out)
	return b, answered, dropped
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

// screenAnswers drops, from the body of a POST of shared session id, the
// answers not known to be for this replica's questions, and forgets the
// questions of those it keeps. It returns the body to serve, or nil when
// nothing is left to serve (the POST has been answered 202).
func (g *Gateway) screenAnswers(w http.ResponseWriter, r *http.Request, id string, rec *sessionRecord, body []byte) []byte {
	s := g.shared
	kept, answered, dropped := s.filterAnswers(rec, body)
	if dropped {
		g.log.Warn("a client's answer was dropped: the question it answers was not asked by this replica alone (another replica of the gateway may have asked a question with the same id); the question ends by its timeout")
	}
	if len(answered) > 0 {
		err := s.update(r.Context(), id, func(rec *sessionRecord) {
			for _, a := range answered {
				rec.Asks = dropAsk(rec.Asks, a, s.replicaToken)
			}
		})
		if err != nil {
			g.log.Warn("the session store failed to forget an answered question", "err", err)
		}
	}
	if kept == nil {
		w.WriteHeader(http.StatusAccepted)
		return nil
	}
	return kept
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

package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	segjson "github.com/segmentio/encoding/json"
)

// CodeCallInterrupted: the replica of the gateway that was answering the
// request stopped (it was killed or restarted) before it answered, or
// the request's answer is held by another replica; the request's outcome
// is unknown (the server may have run it). Sent, with shared sessions, to
// a handshake-era client that resumes the request's event stream on
// another replica. Repeat the request only if it is safe to.
const CodeCallInterrupted = -32015

// A handshake-era client's request is answered on the event stream of
// its POST, by the replica that took the POST. When that stream breaks,
// the client asks for the rest of it with a GET naming its last event
// (Last-Event-ID), which a balancer with no affinity sends to any
// replica. The events of a stream stay in the replica that wrote them;
// another replica answers the GET itself: from the stream's record (the
// ids of the requests it answers, which replica took them), an error
// (CodeCallInterrupted) for each request, so that the client's call ends
// with an error that says what happened instead of the client's session
// failing. The replica that wrote the stream may have stopped, or may
// still be running and unreachable from the client: either way its
// answers cannot be had here, and whether the server ran the requests is
// unknown.

// maxStreamIDs bounds the request ids one stream record keeps.
const maxStreamIDs = 64

// streamRecord is what the store keeps of a POST's event stream.
type streamRecord struct {
	Session   string            `json:"session"`
	Principal string            `json:"principal"`
	Owner     string            `json:"owner"` // the replica that took the requests (for logs)
	IDs       []json.RawMessage `json:"ids"`
}

// callIDsKey carries the ids of the requests of a POST to the event
// store, which go-sdk opens on the POST's goroutine with its context.
type callIDsKey struct{}

// requestIDs returns the ids of the requests (not notifications, not
// responses) in a JSON-RPC message or batch, the first maxStreamIDs of
// them; nil when it has none or is not JSON-RPC (go-sdk then says what
// is wrong).
func requestIDs(body []byte) []json.RawMessage {
	ids := allRequestIDs(body)
	if len(ids) > maxStreamIDs {
		ids = ids[:maxStreamIDs]
	}
	return ids
}

// allRequestIDs returns the ids of the requests in body, a JSON-RPC
// message or batch, as requestIDs does, all of them, read as go-sdk's
// handler reads a POST (hasInitialize): members matched by their exact
// names, each id as go-sdk decodes it (7.0 is 7), so that the ids
// claimed and checked for duplicates are the ids go-sdk serves.
func allRequestIDs(body []byte) []json.RawMessage { return requestIDsOf(body, nil) }

// requestIDsOf returns the ids of the requests in body, as allRequestIDs
// does, of the requests whose method keep keeps only unless keep is nil.
func requestIDsOf(body []byte, keep func(method string) bool) []json.RawMessage {
	var raws []json.RawMessage
	if segjson.NewDecoder(bytes.NewReader(body)).Decode(&raws) != nil {
		raws = []json.RawMessage{body}
	}
	var ids []json.RawMessage
	for _, raw := range raws {
		msg, err := jsonrpc.DecodeMessage(raw)
		if req, ok := msg.(*jsonrpc.Request); err == nil && ok && req.ID.IsValid() && (keep == nil || keep(req.Method)) {
			if b, err := json.Marshal(req.ID.Raw()); err == nil {
				ids = append(ids, b)
			}
		}
	}
	return ids
}

// sharedEvents is the event store of the handshake-era handler when
// sessions are shared: the gateway's memory store for the events (the
// streams written here), plus the record in the session store of each
// stream that answers requests.
type sharedEvents struct {
	*eventStore
	g *Gateway
}

func newSharedEvents(g *Gateway) *sharedEvents {
	return &sharedEvents{eventStore: newEventStore(), g: g}
}

// Open records a new stream as this replica's and, when it answers
// requests, its record in the store, and the stream of the POST whose
// claims ctx carries (openedClaims); the record of a stream the memory
// store dropped for it (maxStreams) is deleted.
func (e *sharedEvents) Open(ctx context.Context, sessionID, streamID string) error {
	s := e.g.shared
	if dropped := e.eventStore.open(ctx, sessionID, streamID); dropped != "" {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
		err := s.store.DeleteSession(dctx, streamKey(sessionID, dropped))
		cancel()
		if err != nil {
			e.g.log.Warn("the session store failed to delete the record of a stream no longer held", "err", err)
		}
	}
	s.openedClaims(ctx, sessionID, streamID)
	ids, _ := ctx.Value(callIDsKey{}).([]json.RawMessage)
	if len(ids) == 0 {
		return nil
	}
	principal := ""
	if ti := auth.TokenInfoFromContext(ctx); ti != nil {
		principal = ti.UserID
	}
	b, _ := json.Marshal(&streamRecord{Session: sessionID, Principal: principal, Owner: s.replicaToken, IDs: ids})
	if len(b) > maxSessionRecord {
		return nil // not read back: a resumption elsewhere is answered by go-sdk
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	if err := s.store.SaveSession(sctx, streamKey(sessionID, streamID), b, s.ttl); err != nil {
		e.g.log.Warn("the session store failed to record a request's stream; if this replica stops, its client's resumption fails", "err", err)
	}
	return nil
}

// Append stores an event of a stream, records the questions the session
// asks its client here (noteOutgoing) and the answers to requests claimed
// (answered).
func (e *sharedEvents) Append(ctx context.Context, sessionID, streamID string, data []byte) error {
	if len(data) > 0 {
		e.g.shared.noteOutgoing(ctx, sessionID, data, e.g.log.Warn)
		e.g.shared.answered(sessionID, streamID, data)
	}
	return e.eventStore.Append(ctx, sessionID, streamID, data)
}

// SessionClosed forgets the session's streams and the questions waiting
// in it, and its copy here (liveSessions), releases the claims of its
// requests held here, and has the session's end reported (sessionClock).
func (e *sharedEvents) SessionClosed(ctx context.Context, sessionID string) error {
	e.g.shared.unwaitSession(sessionID)
	e.g.shared.releaseSession(sessionID)
	e.g.live.forget(sessionID)
	err := e.eventStore.SessionClosed(ctx, sessionID)
	e.g.clock.sessionClosed(sessionID)
	return err
}

// isLocal reports whether stream streamID of session sessionID was
// written here and is held.
func (e *sharedEvents) isLocal(sessionID, streamID string) bool {
	return e.eventStore.holds(sessionID, streamID)
}

func streamKey(sessionID, streamID string) string { return "stream." + sessionID + "." + streamID }

// resumeElsewhere answers a handshake-era client's GET that resumes
// stream streamID of session id, which another replica wrote: an error
// for each request the stream was to answer. It reports false when the
// stream is not recorded (go-sdk then answers).
func (g *Gateway) resumeElsewhere(w http.ResponseWriter, r *http.Request, id, streamID string) bool {
	s := g.shared
	key := streamKey(id, streamID)
	ctx, cancel := context.WithTimeout(r.Context(), s.timeout)
	defer cancel()
	b, err := s.store.LoadSession(ctx, key)
	if err != nil || b == nil || len(b) > maxSessionRecord {
		return false
	}
	var rec streamRecord
	if json.Unmarshal(b, &rec) != nil || rec.Session != id || rec.Principal != principalOf(r) {
		return false
	}
	const msg = "the answer to this request was lost: the replica of the gateway that took it stopped (or cannot be reached) before the client had its answer; whether the server ran it is unknown: repeat the request if it is safe to"
	_ = s.store.DeleteSession(ctx, key) // one answer
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	for i, rid := range rec.IDs {
		data, _ := json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *jsonrpc.Error  `json:"error"`
		}{"2.0", rid, &jsonrpc.Error{Code: CodeCallInterrupted, Message: msg}})
		fmt.Fprintf(w, "event: message\nid: %s_%d\ndata: %s\n\n", streamID, 1_000_000+i, data)
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	g.log.Info("a client resumed a stream another replica wrote; its requests were answered with an error", "requests", len(rec.IDs), "replica", rec.Owner)
	return true
}

// lastStream returns the stream id of a Last-Event-ID (go-sdk's
// STREAM_INDEX), or "".
func lastStream(eid string) string {
	i := strings.LastIndexByte(eid, '_')
	if i <= 0 {
		return ""
	}
	return eid[:i]
}

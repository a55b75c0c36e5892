package gateway

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A replica that gets a request of a shared session it holds no copy of
// makes the copy from the session's record: it replays the session's
// initialize request, its initialized notification and its changes to
// go-sdk's handler, as the client sent them (sessions.go).

// remake makes session id here from its record, once however many
// requests of it come at once.
func (g *Gateway) remake(r *http.Request, id string, rec *sessionRecord) error {
	s := g.shared
	if g.draining.Load() {
		return errors.New("the gateway is shutting down")
	}
	for {
		s.mu.Lock()
		if s.local[id] != nil {
			s.mu.Unlock()
			return nil
		}
		wait, busy := s.making[id]
		if !busy {
			done := make(chan struct{})
			s.making[id] = done
			s.mu.Unlock()
			err := g.replayHeld(r, id, rec)
			s.mu.Lock()
			delete(s.making, id)
			s.mu.Unlock()
			close(done)
			return err
		}
		s.mu.Unlock()
		select {
		case <-wait:
		case <-r.Context().Done():
			return context.Cause(r.Context())
		}
	}
}

// replayHeld makes session id here from its record (replay) in a slot
// of its own under Options.MaxSessions: a copy of a session counts as a
// session, and one past a cap is refused (*sessionCapError).
func (g *Gateway) replayHeld(r *http.Request, id string, rec *sessionRecord) error {
	slot, capErr := g.slots.take(rec.Principal)
	if capErr != nil {
		return capErr
	}
	defer func() { g.endEvicted(r.Context(), g.shared.keep(id, slot)) }()
	return g.replay(r, id, rec)
}

// replayHeader marks the requests a replica replays to make a session
// again, with a value only this gateway knows: they are not observed or
// recorded. (A context value would not do: go-sdk keeps the values of
// the request that made a session for all of its requests.)
const replayHeader = "Mcp-Adapter-Replay"

// replaying reports whether req is one the gateway replays.
func (g *Gateway) replaying(req mcp.Request) bool {
	if g.shared == nil || req == nil {
		return false
	}
	ex := req.GetExtra()
	return ex != nil && ex.Header != nil && ex.Header.Get(replayHeader) == g.shared.replayToken
}

// replay makes session id in go-sdk's handler from its record: its
// initialize request, its initialized notification, its log level and
// its subscriptions, each sent as the client sent it.
func (g *Gateway) replay(r *http.Request, id string, rec *sessionRecord) error {
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	init := fmt.Sprintf(`{"jsonrpc":"2.0","id":"replay","method":"initialize","params":%s}`, rec.Init)
	rw := &replayWriter{header: http.Header{}}
	g.makeSession(rw, g.replayRequest(ctx, r, "", "", init), id)
	if rw.status != http.StatusOK || rw.header.Get("Mcp-Session-Id") != id {
		g.dropUnheld(id)
		return fmt.Errorf("the replayed initialize was answered %d: %s", rw.status, strings.TrimSpace(rw.body.String()))
	}
	steps := []string{`{"jsonrpc":"2.0","method":"notifications/initialized"}`}
	if rec.Level != "" {
		steps = append(steps, levelStep(rec.Level))
	}
	for i, uri := range rec.Subs {
		steps = append(steps, subStep("resources/subscribe", i, uri))
	}
	if err := g.replaySteps(r, id, rec.Version, steps); err != nil {
		g.dropUnheld(id) // the next request makes it again, from the start
		return err
	}
	for ss := range g.server.Sessions() {
		if ss.ID() == id {
			if !g.shared.hold(ss, rec, &g.sessWG) {
				return errClosed
			}
			return nil
		}
	}
	return errors.New("the replayed session ended at once")
}

// dropUnheld closes the sessions with id that this replica does not
// hold: one a replay began and could not finish. The sessions of
// 2026-07-28 requests have no id: "" names none.
func (g *Gateway) dropUnheld(id string) {
	if id == "" {
		return
	}
	held := g.shared.held(id)
	for ss := range g.server.Sessions() {
		if ss.ID() == id && ss != held {
			_ = ss.Close()
		}
	}
}

// replaySteps sends the requests steps to session id as its client would.
func (g *Gateway) replaySteps(r *http.Request, id, version string, steps []string) error {
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	for _, body := range steps {
		rw := &replayWriter{header: http.Header{}}
		g.stateful.ServeHTTP(rw, g.replayRequest(ctx, r, id, version, body))
		if rw.status >= 300 {
			return fmt.Errorf("a replayed request was answered %d: %s", rw.status, strings.TrimSpace(rw.body.String()))
		}
	}
	return nil
}

// replayRequest is a POST of body to the gateway, with r's context values
// (its principal) but not the ids of r's requests nor their claims (its
// streams are not r's), and the session and version headers given.
func (g *Gateway) replayRequest(ctx context.Context, r *http.Request, id, version, body string) *http.Request {
	ctx = context.WithValue(ctx, callIDsKey{}, []json.RawMessage(nil))
	ctx = context.WithValue(ctx, claimsKey{}, (*postClaims)(nil))
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "/", strings.NewReader(body))
	req.Host = r.Host
	req.Header.Set(replayHeader, g.shared.replayToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
	}
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	return req
}

// replayWriter keeps the answer to a replayed request.
type replayWriter struct {
	header http.Header
	status int
	body   strings.Builder
}

func (w *replayWriter) Header() http.Header { return w.header }

func (w *replayWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *replayWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.body.Len() < 4096 {
		w.body.Write(b[:min(len(b), 4096)])
	}
	return len(b), nil
}

func (w *replayWriter) Flush() {}

// levelStep and subStep are the requests that apply a session's log
// level and a subscription to its copy here, each under an id of its own
// that no client can choose (go-sdk would refuse one a client's request in
// flight has as a duplicate).
func levelStep(level string) string {
	lv, _ := json.Marshal(level)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":"replay-level-%s","method":"logging/setLevel","params":{"level":%s}}`, rand.Text(), lv)
}

func subStep(method string, i int, uri string) string {
	u, _ := json.Marshal(uri)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":"replay-sub-%d-%s","method":%q,"params":{"uri":%s}}`, i, rand.Text(), method, u)
}

// nextSessionID is go-sdk's ServerOptions.GetSessionID: the id chosen by
// the request that holds the gate (makeSession), or a new random one.
func (g *Gateway) nextSessionID() string {
	if s := g.shared; s != nil {
		s.gateMu.Lock()
		defer s.gateMu.Unlock()
		if s.gated {
			id := s.nextID
			s.gated, s.nextID = false, ""
			<-s.gate
			return id
		}
	}
	return rand.Text()
}

// makeSession serves r, a request that makes a session, under the id id:
// it holds the gate until go-sdk asks for the id, which go-sdk does on
// the request's goroutine before it reads the body, or until go-sdk
// refuses the request without making a session.
func (g *Gateway) makeSession(w http.ResponseWriter, r *http.Request, id string) {
	s := g.shared
	select {
	case s.gate <- struct{}{}:
	case <-r.Context().Done():
		http.Error(w, "the request ended before its session was made", http.StatusServiceUnavailable)
		return
	}
	s.gateMu.Lock()
	s.gated, s.nextID = true, id
	s.gateMu.Unlock()
	defer func() {
		s.gateMu.Lock()
		defer s.gateMu.Unlock()
		if s.gated && s.nextID == id {
			s.gated, s.nextID = false, ""
			<-s.gate
		}
	}()
	g.stateful.ServeHTTP(w, r)
}

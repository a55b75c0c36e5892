package ui

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// A SavedCall is a call to run again: its tool, arguments and the result
// it gave when saved, which later runs are checked against.
type SavedCall struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Server   string          `json:"server"`
	Tool     string          `json:"tool"`
	Args     json.RawMessage `json:"args"`
	Expected *resultView     `json:"expected"`
	SavedAt  time.Time       `json:"savedAt"`
}

// savedCalls are the session's saved calls, in the order saved.
type savedCalls struct {
	mu    sync.Mutex
	calls []SavedCall
	next  int
}

func (sc *savedCalls) add(c SavedCall) SavedCall {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.next++
	c.ID = "s" + strconv.Itoa(sc.next)
	if c.Name == "" {
		c.Name = c.Tool + " " + c.ID
	}
	if c.SavedAt.IsZero() {
		c.SavedAt = time.Now()
	}
	sc.calls = append(sc.calls, c)
	return c
}

func (sc *savedCalls) list() []SavedCall {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return append([]SavedCall{}, sc.calls...)
}

func (sc *savedCalls) get(id string) (SavedCall, bool) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, c := range sc.calls {
		if c.ID == id {
			return c, true
		}
	}
	return SavedCall{}, false
}

func (sc *savedCalls) remove(id string) bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for i, c := range sc.calls {
		if c.ID == id {
			sc.calls = append(sc.calls[:i], sc.calls[i+1:]...)
			return true
		}
	}
	return false
}

func (s *Server) handleSaved(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, s.saved.list())
}

// handleSave saves a finished call: its arguments and its result.
func (s *Server) handleSave(w http.ResponseWriter, r *http.Request) {
	var req struct {
		CallID string `json:"callId"`
		Name   string `json:"name"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	c, ok := s.calls.get(req.CallID)
	if !ok {
		apiError(w, http.StatusNotFound, fmt.Errorf("no call %q", req.CallID))
		return
	}
	st := c.snapshot()
	if st.Result == nil {
		apiError(w, http.StatusConflict, fmt.Errorf("call %s has no result to expect", req.CallID))
		return
	}
	writeJSON(w, s.saved.add(SavedCall{Name: req.Name, Server: st.Server, Tool: st.Tool, Args: st.Args, Expected: st.Result}))
}

func (s *Server) handleRunSaved(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID string `json:"id"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	sc, ok := s.saved.get(req.ID)
	if !ok {
		apiError(w, http.StatusNotFound, fmt.Errorf("no saved call %q", req.ID))
		return
	}
	id, err := s.calls.start(callRequest{Server: sc.Server, Tool: sc.Tool, Args: sc.Args, Saved: sc.ID}, sc.Expected)
	if err != nil {
		apiError(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, map[string]string{"id": id})
}

func (s *Server) handleDeleteSaved(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID string `json:"id"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	writeJSON(w, map[string]bool{"ok": s.saved.remove(req.ID)})
}

// handleImportSaved adds saved calls exported earlier (JSON).
func (s *Server) handleImportSaved(w http.ResponseWriter, r *http.Request) {
	var in []SavedCall
	if !readJSON(w, r, &in) {
		return
	}
	for _, c := range in {
		if c.Tool == "" || c.Expected == nil {
			apiError(w, http.StatusBadRequest, fmt.Errorf("saved call %q: a tool and an expected result are needed", c.Name))
			return
		}
	}
	for _, c := range in {
		s.saved.add(c)
	}
	writeJSON(w, s.saved.list())
}

func (s *Server) handleExportSaved(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Disposition", `attachment; filename="mcpadapter-saved-calls.json"`)
	writeJSON(w, s.saved.list())
}

func (s *Server) handleExportGo(w http.ResponseWriter, r *http.Request) {
	src, err := goTest(s.opts.Target, s.saved.list())
	if err != nil {
		apiError(w, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "text/x-go; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="saved_calls_test.go"`)
	_, _ = w.Write(src)
}

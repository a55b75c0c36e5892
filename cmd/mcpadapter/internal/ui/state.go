package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// state is what the inspector knows of the servers: their connections
// and their tools, as last listed.
type state struct {
	s *Server

	mu    sync.Mutex
	view  *stateView
	tools []*mcpadapter.Tool
}

// stateView is the answer to GET /api/state.
type stateView struct {
	Source      string        `json:"source"`
	Servers     []serverView  `json:"servers"`
	Unavailable []failureView `json:"unavailable"`
	Groups      []groupView   `json:"groups"`
	Tools       []toolView    `json:"tools"`
	// ListError says why the merged list could not be made (a name
	// collision); the tools are then each server's own.
	ListError  *errorInfo `json:"listError,omitempty"`
	Collisions []string   `json:"collisions"`
	ListedAt   time.Time  `json:"listedAt"`
}

type serverView struct {
	Name            string                  `json:"name"`
	Transport       string                  `json:"transport"`
	Era             string                  `json:"era"`
	ProtocolVersion string                  `json:"protocolVersion"`
	Implementation  *mcp.Implementation     `json:"implementation,omitempty"`
	Capabilities    *mcp.ServerCapabilities `json:"capabilities,omitempty"`
	Instructions    string                  `json:"instructions,omitempty"`
	ConnectedAt     time.Time               `json:"connectedAt"`
	ConnectMs       float64                 `json:"connectMs"`
}

type failureView struct {
	Server string `json:"server"`
	errorInfo
}

type groupView struct {
	Servers      []string `json:"servers"`
	Era          string   `json:"era"`
	PulledDownBy string   `json:"pulledDownBy,omitempty"`
}

type toolView struct {
	Name         string               `json:"name"`
	OriginalName string               `json:"originalName"`
	Server       string               `json:"server"`
	Title        string               `json:"title,omitempty"`
	Description  string               `json:"description,omitempty"`
	InputSchema  json.RawMessage      `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage      `json:"outputSchema,omitempty"`
	Annotations  *mcp.ToolAnnotations `json:"annotations,omitempty"`
	Meta         map[string]any       `json:"meta,omitempty"`
	TaskSupport  string               `json:"taskSupport,omitempty"`
	UI           *toolUI              `json:"ui,omitempty"`
	Collides     bool                 `json:"collides,omitempty"`
}

// toolUI is a tool's MCP Apps metadata.
type toolUI struct {
	ResourceURI string   `json:"resourceUri"`
	Visibility  []string `json:"visibility,omitempty"`
}

// errorInfo is an error as the page shows it: the adapter's message
// (with its hint), its kind, and a stdio server's last stderr lines.
type errorInfo struct {
	Error  string   `json:"error"`
	Kind   string   `json:"kind,omitempty"`
	Op     string   `json:"op,omitempty"`
	Stderr []string `json:"stderr,omitempty"`
}

func errorView(err error) *errorInfo {
	e := &errorInfo{Error: strings.TrimPrefix(err.Error(), "mcpadapter: "), Kind: mcpadapter.ErrorType(err)}
	var te *mcpadapter.TransportError
	if errors.As(err, &te) {
		e.Op, e.Stderr = te.Op, te.RedactedStderr()
	}
	return e
}

// failures flattens the failures an Info error holds.
func failures(err error) []failureView {
	if ge, ok := err.(*mcpadapter.GroupError); ok {
		var out []failureView
		for _, f := range ge.Failures {
			out = append(out, failureView{Server: f.Server, errorInfo: *errorView(f.Err)})
		}
		return out
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []failureView
		for _, e := range j.Unwrap() {
			out = append(out, failures(e)...)
		}
		return out
	}
	server := ""
	var te *mcpadapter.TransportError
	if errors.As(err, &te) {
		server = te.Server
	}
	return []failureView{{Server: server, errorInfo: *errorView(err)}}
}

// refresh connects (or reconnects) and lists again.
func (st *state) refresh(ctx context.Context) *stateView {
	sess := st.s.opts.Session
	v := &stateView{Source: sess.Source(), ListedAt: time.Now(), Servers: []serverView{}, Unavailable: []failureView{}, Groups: []groupView{}, Tools: []toolView{}, Collisions: []string{}}
	info, err := sess.Info(ctx)
	if err != nil {
		v.Unavailable = failures(err)
	} else {
		for _, si := range info.Servers {
			v.Servers = append(v.Servers, serverView{
				Name: si.Name, Transport: si.Transport, Era: si.Era.String(), ProtocolVersion: si.ProtocolVersion,
				Implementation: si.Implementation, Capabilities: si.Capabilities, Instructions: si.Instructions,
				ConnectedAt: si.ConnectedAt, ConnectMs: float64(si.ConnectTime.Microseconds()) / 1000,
			})
		}
		for _, f := range info.Unavailable {
			v.Unavailable = append(v.Unavailable, failureView{Server: f.Server, errorInfo: *errorView(f.Err)})
		}
		for _, g := range info.Groups {
			v.Groups = append(v.Groups, groupView{Servers: g.Servers, Era: g.Era.String(), PulledDownBy: g.PulledDownBy})
		}
	}
	tools, err := sess.Tools(ctx)
	var nc *mcpadapter.NameCollisionError
	if errors.As(err, &nc) {
		// Show each server's own list, with the two contested tools
		// marked.
		v.ListError = errorView(err)
		v.Collisions = append(v.Collisions, nc.Name)
		tools = nil
		for _, c := range sess.Clients() {
			if ct, cerr := c.Tools(ctx); cerr == nil {
				tools = append(tools, ct...)
			}
		}
	} else if err != nil {
		v.ListError = errorView(err)
	}
	for _, t := range tools {
		tv := toolView{Name: t.Name, OriginalName: t.OriginalName, Server: t.Server, Title: t.Title, Description: t.Description,
			InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, Annotations: t.Annotations, Meta: t.Meta,
			TaskSupport: t.TaskSupport}
		if u := t.UI(); u != nil {
			tv.UI = &toolUI{ResourceURI: u.ResourceURI, Visibility: u.Visibility}
		}
		if nc != nil {
			source := t.Server + "/" + t.OriginalName
			tv.Collides = source == nc.First || source == nc.Second
		}
		v.Tools = append(v.Tools, tv)
	}
	st.mu.Lock()
	st.view, st.tools = v, tools
	st.mu.Unlock()
	return v
}

// current returns the last view, listing first if there is none.
func (st *state) current(ctx context.Context) *stateView {
	st.mu.Lock()
	v := st.view
	st.mu.Unlock()
	if v == nil {
		v = st.refresh(ctx)
	}
	return v
}

// tool finds a listed tool by its server and name.
func (st *state) tool(ctx context.Context, server, name string) (*mcpadapter.Tool, error) {
	st.current(ctx)
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, t := range st.tools {
		if t.Server == server && t.Name == name {
			return t, nil
		}
	}
	return nil, fmt.Errorf("no tool %q on server %q (reload the list)", name, server)
}

// allTools returns the tools as last listed.
func (st *state) allTools(ctx context.Context) []*mcpadapter.Tool {
	st.current(ctx)
	st.mu.Lock()
	defer st.mu.Unlock()
	return append([]*mcpadapter.Tool(nil), st.tools...)
}

func (s *Server) handleState(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Minute)
	defer cancel()
	if r.URL.Query().Has("refresh") {
		writeJSON(w, s.state.refresh(ctx))
		return
	}
	writeJSON(w, s.state.current(ctx))
}

// diffView is what a reconnect changed.
type diffView struct {
	ServersAdded   []string      `json:"serversAdded"`
	ServersRemoved []string      `json:"serversRemoved"`
	ServerChanges  []fieldChange `json:"serverChanges"`
	ToolsAdded     []string      `json:"toolsAdded"`
	ToolsRemoved   []string      `json:"toolsRemoved"`
	ToolsChanged   []fieldChange `json:"toolsChanged"`
}

type fieldChange struct {
	Name   string `json:"name"`
	Field  string `json:"field"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// handleReconnect closes every connection, connects and lists again, and
// says what changed in the servers' versions, capabilities and tools.
func (s *Server) handleReconnect(w http.ResponseWriter, r *http.Request) {
	var req struct{}
	if !readJSON(w, r, &req) {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Minute)
	defer cancel()
	before := s.state.current(ctx)
	for _, c := range s.opts.Session.Clients() {
		_ = c.Close()
	}
	after := s.state.refresh(ctx)
	s.events.add(Event{Kind: "servers"})
	writeJSON(w, map[string]any{"state": after, "diff": diff(before, after)})
}

func diff(a, b *stateView) diffView {
	d := diffView{ServersAdded: []string{}, ServersRemoved: []string{}, ServerChanges: []fieldChange{}, ToolsAdded: []string{}, ToolsRemoved: []string{}, ToolsChanged: []fieldChange{}}
	serverFields := func(v serverView) map[string]string {
		m := map[string]string{"protocolVersion": v.ProtocolVersion, "transport": v.Transport, "instructions": v.Instructions}
		if v.Implementation != nil {
			m["version"] = v.Implementation.Version
			m["implementation"] = v.Implementation.Name
		}
		caps, _ := json.Marshal(v.Capabilities)
		m["capabilities"] = string(caps)
		return m
	}
	as, bs := map[string]serverView{}, map[string]serverView{}
	for _, v := range a.Servers {
		as[v.Name] = v
	}
	for _, v := range b.Servers {
		bs[v.Name] = v
	}
	for name, bv := range bs {
		av, ok := as[name]
		if !ok {
			d.ServersAdded = append(d.ServersAdded, name)
			continue
		}
		d.ServerChanges = append(d.ServerChanges, changes(name, serverFields(av), serverFields(bv))...)
	}
	for name := range as {
		if _, ok := bs[name]; !ok {
			d.ServersRemoved = append(d.ServersRemoved, name)
		}
	}
	toolFields := func(t toolView) map[string]string {
		return map[string]string{"title": t.Title, "description": t.Description, "inputSchema": canonical(t.InputSchema), "outputSchema": canonical(t.OutputSchema)}
	}
	at, bt := map[string]toolView{}, map[string]toolView{}
	for _, t := range a.Tools {
		at[t.Server+"/"+t.Name] = t
	}
	for _, t := range b.Tools {
		bt[t.Server+"/"+t.Name] = t
	}
	for key, bv := range bt {
		av, ok := at[key]
		if !ok {
			d.ToolsAdded = append(d.ToolsAdded, key)
			continue
		}
		d.ToolsChanged = append(d.ToolsChanged, changes(key, toolFields(av), toolFields(bv))...)
	}
	for key := range at {
		if _, ok := bt[key]; !ok {
			d.ToolsRemoved = append(d.ToolsRemoved, key)
		}
	}
	for _, l := range [][]string{d.ServersAdded, d.ServersRemoved, d.ToolsAdded, d.ToolsRemoved} {
		sort.Strings(l)
	}
	sortChanges := func(c []fieldChange) {
		sort.Slice(c, func(i, j int) bool { return c[i].Name+c[i].Field < c[j].Name+c[j].Field })
	}
	sortChanges(d.ServerChanges)
	sortChanges(d.ToolsChanged)
	return d
}

func changes(name string, a, b map[string]string) []fieldChange {
	var out []fieldChange
	for k, bv := range b {
		if av := a[k]; av != bv {
			out = append(out, fieldChange{Name: name, Field: k, Before: av, After: bv})
		}
	}
	return out
}

// canonical returns raw re-encoded with sorted keys ("" for none), so
// that two schemas compare by meaning, not by spacing.
func canonical(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskParams are the params of the tasks/* requests of both eras.
type taskParams struct {
	mcp.ParamsBase
	TaskID         string                     `json:"taskId,omitempty"`
	Cursor         string                     `json:"cursor,omitempty"`
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
	RequestState   string                     `json:"requestState,omitempty"`
}

// taskIDPattern is the form of the gateway's task ids: the server's name,
// a dot, 32 hex digits.
var taskIDPattern = regexp.MustCompile(`^([A-Za-z0-9_-]{1,64})\.([0-9a-f]{32})$`)

// parseTaskID returns the server a task id names; ok is false for an id
// the gateway cannot have made.
func parseTaskID(id string) (server string, ok bool) {
	m := taskIDPattern.FindStringSubmatch(id)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// addTaskMethods registers the tasks/* methods on the gateway's server.
func (g *Gateway) addTaskMethods() error {
	for method, h := range map[string]func(context.Context, *mcp.ServerSession, *taskParams) (*rawResult, error){
		"tasks/get":    g.tasksGet,
		"tasks/result": g.tasksResult,
		"tasks/cancel": g.tasksCancel,
		"tasks/update": g.tasksUpdate,
		"tasks/list":   g.tasksList,
	} {
		if err := mcp.AddReceivingCustomMethod(g.server, method, h); err != nil {
			return err
		}
	}
	return nil
}

// find returns the caller's task p names.
func (g *Gateway) find(ctx context.Context, p *taskParams) (*gwTask, error) {
	if p == nil || p.TaskID == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: $.taskId is required"}
	}
	if _, ok := parseTaskID(p.TaskID); !ok {
		return nil, errUnknownTask(p.TaskID)
	}
	return g.tasks.get(ctx, PrincipalFrom(ctx), p.TaskID)
}

// lookup returns the caller's task p names, to use it: a task of a tool
// the Policy now refuses the caller (it changed since the task began) is
// cancelled and forgotten, and answered as unknown.
func (g *Gateway) lookup(ctx context.Context, p *taskParams) (*gwTask, error) {
	t, err := g.find(ctx, p)
	if err != nil {
		return nil, err
	}
	if !g.allowed(ctx, t.server, "tool", t.tool) {
		_ = g.tasks.cancelTask(ctx, t) // an error: it ended already
		g.tasks.forget(ctx, t)
		return nil, errUnknownTask(p.TaskID)
	}
	return t, nil
}

func (g *Gateway) tasksGet(ctx context.Context, _ *mcp.ServerSession, p *taskParams) (*rawResult, error) {
	t, err := g.lookup(ctx, p)
	if err != nil {
		return nil, err
	}
	res := g.taskResult(t, false).(*rawResult)
	if status, _, _, _, _, _, _ := t.snapshot(); t.ext && terminal(status) {
		g.tasks.fetched(ctx, t) // the extension's tasks/get carries the result
	}
	return res, nil
}

// tasksResult answers a 2025-11-25 tasks/result: it waits for the task to
// end, putting the server's questions to the client meanwhile, and
// returns the call's result.
func (g *Gateway) tasksResult(ctx context.Context, ss *mcp.ServerSession, p *taskParams) (*rawResult, error) {
	t, err := g.lookup(ctx, p)
	if err != nil {
		return nil, err
	}
	asked := make(map[string]bool)
	for {
		status, _, _, res, rerr, asks, wake := t.snapshot()
		switch status {
		case stCompleted:
			g.tasks.fetched(ctx, t)
			c := *res
			c.Meta = cloneMeta(res.Meta)
			c.Meta["io.modelcontextprotocol/related-task"] = map[string]any{"taskId": t.id}
			return marshalResult(&c).(*rawResult), nil
		case stFailed:
			g.tasks.fetched(ctx, t)
			return nil, rerr
		case stCancelled:
			g.tasks.fetched(ctx, t)
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("task %q was cancelled", t.id)}
		}
		for _, q := range asks {
			if asked[q.key] || ss == nil {
				continue
			}
			asked[q.key] = true
			actx, cancel := g.askBound(ctx, "elicitation")
			r, err := ss.Elicit(actx, q.params)
			cancel()
			if err != nil {
				r = &mcp.ElicitResult{Action: "cancel"}
			}
			if err := g.tasks.answer(ctx, t, q.key, r); err != nil {
				g.log.Debug("a client's answer to a task's question was not taken", "task", t.id, "err", err)
			}
		}
		if t.rec == nil {
			select {
			case <-wake:
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
			continue
		}
		// Another replica runs it: its record is read again.
		select {
		case <-time.After(g.tasks.opts.poll()):
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
		if t, err = g.tasks.fromStore(ctx, t.principal, t.id); err != nil {
			return nil, err
		}
	}
}

func (g *Gateway) tasksCancel(ctx context.Context, _ *mcp.ServerSession, p *taskParams) (*rawResult, error) {
	t, err := g.find(ctx, p) // whatever the Policy says now: a task can always be stopped
	if err != nil {
		return nil, err
	}
	if err := g.tasks.cancelTask(ctx, t); err != nil {
		return nil, err
	}
	return g.taskResult(t, false).(*rawResult), nil
}

// tasksUpdate takes a 2026-07-28 client's answers to the task's questions.
func (g *Gateway) tasksUpdate(ctx context.Context, _ *mcp.ServerSession, p *taskParams) (*rawResult, error) {
	t, err := g.lookup(ctx, p)
	if err != nil {
		return nil, err
	}
	for key, raw := range p.InputResponses {
		var r mcp.ElicitResult
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid params: $.inputResponses[%q]: %v", key, err)}
		}
		if err := g.tasks.answer(ctx, t, key, &r); err != nil {
			return nil, err
		}
	}
	return &rawResult{raw: json.RawMessage("{}")}, nil
}

// tasksList lists the caller's tasks, and only those.
func (g *Gateway) tasksList(ctx context.Context, ss *mcp.ServerSession, p *taskParams) (*rawResult, error) {
	if p != nil && p.Cursor != "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: $.cursor: the gateway lists every task in one page"}
	}
	views := []any{}
	tasks := g.tasks.list(PrincipalFrom(ctx), ss)
	if g.tasks.sh != nil {
		var err error
		if tasks, err = g.tasks.listShared(ctx, PrincipalFrom(ctx), ss); err != nil {
			return nil, err
		}
	}
	for _, t := range tasks {
		views = append(views, g.tasks.view(t, t.ext, false))
	}
	return marshalResult(map[string]any{"tasks": views}).(*rawResult), nil
}

// view describes t in the extension's form (ext) or 2025-11-25's;
// created says it answers the tools/call that made it.
func (s *taskStore) view(t *gwTask, ext, created bool) map[string]any {
	status, msg, updated, res, rerr, asks, _ := t.snapshot()
	v := map[string]any{"taskId": t.id, "status": status, "createdAt": t.created.UTC().Format(time.RFC3339Nano), "lastUpdatedAt": updated.UTC().Format(time.RFC3339Nano)}
	if msg != "" {
		v["statusMessage"] = msg
	}
	ttl, poll := t.ttl.Milliseconds(), s.opts.poll().Milliseconds()
	if !ext {
		v["ttl"], v["pollInterval"] = ttl, poll
		return v
	}
	v["ttlMs"], v["pollIntervalMs"] = ttl, poll
	if created {
		// A task may wait for input already when its call is answered:
		// its questions come with it, as they do in tasks/get.
		v["resultType"] = "task"
		if status != stInput {
			return v
		}
	}
	switch status {
	case stCompleted:
		v["result"] = res
	case stFailed:
		v["error"] = rerr
	case stInput:
		reqs := make(map[string]any, len(asks))
		for _, q := range asks {
			reqs[q.key] = map[string]any{"method": "elicitation/create", "params": q.params}
		}
		v["inputRequests"] = reqs
	}
	return v
}

// forget drops t: a task whose call was answered without one, or one its
// principal may no longer use.
func (s *taskStore) forget(ctx context.Context, t *gwTask) {
	if s.sh != nil {
		s.forgetShared(ctx, t)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tasks[t.id] == t {
		delete(s.tasks, t.id)
		s.uncount(t)
	}
}

// liftTask moves the "task" member of a 2025-11-25 tools/call in r's body
// into its _meta (taskMetaKey), where the gateway's handlers see it.
func (g *Gateway) liftTask(r *http.Request) {
	if r.Method != http.MethodPost || r.Body == nil {
		return
	}
	max := g.opts.maxRequestBytes()
	body, err := readLimited(r.Body, r.ContentLength, max)
	rest := r.Body
	if err != nil || int64(len(body)) > max {
		r.Body = readCloser{io.MultiReader(bytes.NewReader(body), rest), rest}
		return
	}
	r.Body = putBack(liftTaskMember(body))
	r.ContentLength = -1
	rest.Close()
}

// liftTaskMember returns body with the "task" member of a tools/call's
// params moved into its _meta; any other body is returned as it is.
func liftTaskMember(body []byte) []byte {
	if !bytes.Contains(body, []byte(`"task"`)) || !bytes.Contains(body, []byte("tools/call")) {
		return body
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil || string(msg["method"]) != `"tools/call"` {
		return body
	}
	params, ok := liftParams(msg["params"])
	if !ok {
		return body
	}
	msg["params"] = params
	out, err := json.Marshal(msg)
	if err != nil {
		return body
	}
	return out
}

// liftParams moves the "task" member of tools/call params into their
// _meta; ok is false when there is none to move.
func liftParams(raw json.RawMessage) (_ json.RawMessage, ok bool) {
	if !bytes.Contains(raw, []byte(`"task"`)) {
		return raw, false
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(raw, &params) != nil || params["task"] == nil {
		return raw, false
	}
	var ask map[string]json.RawMessage
	if json.Unmarshal(params["task"], &ask) != nil || ask == nil {
		return raw, false // not an object: go-sdk drops it, a plain call
	}
	meta := map[string]json.RawMessage{}
	if m := params["_meta"]; m != nil && (json.Unmarshal(m, &meta) != nil || meta == nil) {
		return raw, false
	}
	meta[taskMetaKey] = params["task"]
	delete(params, "task")
	var err error
	if params["_meta"], err = json.Marshal(meta); err != nil {
		return raw, false
	}
	out, err := json.Marshal(params)
	if err != nil {
		return raw, false
	}
	return out, true
}

// liftingTransport is a transport whose tools/calls have their "task"
// member lifted (liftParams), for clients over stdio; with ids, the id
// of each request is recorded there for Options.Telemetry.
type liftingTransport struct {
	mcp.Transport
	ids *stdioIDs
}

func (t liftingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return liftingConn{c, t.ids}, nil
}

type liftingConn struct {
	mcp.Connection
	ids *stdioIDs
}

func (c liftingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Request); ok {
		if r.Method == "tools/call" {
			r.Params, _ = liftParams(r.Params)
		}
		if c.ids != nil {
			c.ids.put(r)
		}
	}
	return m, err
}

// listTaskSupport shows a 2025-11-25 client every tool as one it may call
// as a task (execution.taskSupport "optional"): the gateway runs the call
// as a task when the server does not.
func (g *Gateway) listTaskSupport(req mcp.Request, res mcp.Result) mcp.Result {
	ss, _ := req.GetSession().(*mcp.ServerSession)
	if ss == nil {
		return res
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.ProtocolVersion < "2025-11-25" || ip.ProtocolVersion >= modernVersion {
		return res
	}
	l, ok := res.(*mcp.ListToolsResult)
	if !ok {
		return res
	}
	type tool struct {
		*mcp.Tool
		Execution map[string]string `json:"execution,omitempty"`
	}
	out := struct {
		Tools      []tool         `json:"tools"`
		NextCursor string         `json:"nextCursor,omitempty"`
		Meta       map[string]any `json:"_meta,omitempty"`
	}{Tools: make([]tool, len(l.Tools)), NextCursor: l.NextCursor, Meta: l.Meta}
	for i, t := range l.Tools {
		out.Tools[i] = tool{Tool: t}
		if !g.search.handles(t.Name) { // the search pair runs no tasks
			out.Tools[i].Execution = map[string]string{"taskSupport": "optional"}
		}
	}
	return marshalResult(out)
}

// withTasksCapability adds the tasks capability of 2025-11-25 (list,
// cancel, task-augmented tools/call) to an initialize result of that
// version; go-sdk v1.8.0's capabilities have no field for it.
func withTasksCapability(res mcp.Result) mcp.Result {
	ir, ok := res.(*mcp.InitializeResult)
	if !ok || ir == nil || ir.ProtocolVersion != "2025-11-25" {
		return res
	}
	b, err := json.Marshal(ir)
	if err != nil {
		return res
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return res
	}
	caps, _ := m["capabilities"].(map[string]any)
	if caps == nil {
		caps = map[string]any{}
		m["capabilities"] = caps
	}
	caps["tasks"] = map[string]any{"list": map[string]any{}, "cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
	return marshalResult(m)
}

func cloneMeta(m mcp.Meta) mcp.Meta {
	out := make(mcp.Meta, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

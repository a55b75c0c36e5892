package ui

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The servers' resources, templates, prompts, completions and tasks, by
// server name: a request names a server of the session, never a new one.

// client returns the session's client of the named server.
func (s *Server) client(w http.ResponseWriter, name string) (*mcpadapter.Client, bool) {
	c, err := s.opts.Session.Client(name)
	if err != nil {
		apiError(w, http.StatusNotFound, err)
		return nil, false
	}
	return c, true
}

// requestContext bounds a request to a server.
func (s *Server) requestContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), time.Minute)
}

func (s *Server) handleResources(w http.ResponseWriter, r *http.Request) {
	c, ok := s.client(w, r.URL.Query().Get("server"))
	if !ok {
		return
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	out := map[string]any{"resources": []*mcp.Resource{}, "templates": []*mcp.ResourceTemplate{}}
	if res, err := c.ListResources(ctx); err != nil {
		out["resourcesError"] = errorView(err)
	} else if res != nil {
		out["resources"] = res
	}
	if tpl, err := c.ListResourceTemplates(ctx); err != nil {
		out["templatesError"] = errorView(err)
	} else if tpl != nil {
		out["templates"] = tpl
	}
	writeJSON(w, out)
}

func (s *Server) handleReadResource(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Server string `json:"server"`
		URI    string `json:"uri"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	c, ok := s.client(w, req.Server)
	if !ok {
		return
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	res, err := c.ReadResource(ctx, req.URI)
	if err != nil {
		apiError(w, http.StatusBadGateway, err)
		return
	}
	var blocks []contentView
	for _, rc := range res.Contents {
		blocks = append(blocks, contentView{Type: "resource", URI: rc.URI, MIMEType: safeMIME(rc.MIMEType), Text: rc.Text, Data: rc.Blob, Meta: rc.Meta})
	}
	writeJSON(w, map[string]any{"contents": blocks})
}

func (s *Server) handlePrompts(w http.ResponseWriter, r *http.Request) {
	c, ok := s.client(w, r.URL.Query().Get("server"))
	if !ok {
		return
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	prompts, err := c.ListPrompts(ctx)
	if err != nil {
		apiError(w, http.StatusBadGateway, err)
		return
	}
	if prompts == nil {
		prompts = []*mcp.Prompt{}
	}
	writeJSON(w, map[string]any{"prompts": prompts})
}

func (s *Server) handleGetPrompt(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Server string            `json:"server"`
		Name   string            `json:"name"`
		Args   map[string]string `json:"args"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	c, ok := s.client(w, req.Server)
	if !ok {
		return
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	res, err := c.GetPrompt(ctx, req.Name, req.Args)
	if err != nil {
		apiError(w, http.StatusBadGateway, err)
		return
	}
	type message struct {
		Role    string      `json:"role"`
		Content contentView `json:"content"`
	}
	msgs := []message{}
	for _, m := range res.Messages {
		msgs = append(msgs, message{Role: string(m.Role), Content: mcpContent(m.Content)})
	}
	writeJSON(w, map[string]any{"description": res.Description, "messages": msgs})
}

// mcpContent is contentOf for go-sdk's content (prompt messages).
func mcpContent(c mcp.Content) contentView {
	switch c := c.(type) {
	case *mcp.TextContent:
		return contentView{Type: "text", Text: c.Text}
	case *mcp.ImageContent:
		return contentView{Type: "image", Data: c.Data, MIMEType: safeMIME(c.MIMEType)}
	case *mcp.AudioContent:
		return contentView{Type: "audio", Data: c.Data, MIMEType: safeMIME(c.MIMEType)}
	case *mcp.ResourceLink:
		return contentView{Type: "resource_link", URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description, MIMEType: safeMIME(c.MIMEType)}
	case *mcp.EmbeddedResource:
		if c.Resource != nil {
			return contentView{Type: "resource", URI: c.Resource.URI, MIMEType: safeMIME(c.Resource.MIMEType), Text: c.Resource.Text, Data: c.Resource.Blob}
		}
	}
	return contentView{Type: "unknown"}
}

func (s *Server) handleComplete(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Server string `json:"server"`
		// Ref is "prompt" or "resource"; Name the prompt's name or the
		// template's URI.
		Ref      string            `json:"ref"`
		Name     string            `json:"name"`
		Argument string            `json:"argument"`
		Value    string            `json:"value"`
		Context  map[string]string `json:"context,omitempty"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	c, ok := s.client(w, req.Server)
	if !ok {
		return
	}
	p := &mcp.CompleteParams{Argument: mcp.CompleteParamsArgument{Name: req.Argument, Value: req.Value}}
	switch req.Ref {
	case "prompt":
		p.Ref = &mcp.CompleteReference{Type: "ref/prompt", Name: req.Name}
	case "resource":
		p.Ref = &mcp.CompleteReference{Type: "ref/resource", URI: req.Name}
	default:
		apiError(w, http.StatusBadRequest, errors.New("ref: want prompt or resource"))
		return
	}
	if len(req.Context) > 0 {
		p.Context = &mcp.CompleteContext{Arguments: req.Context}
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	res, err := c.Complete(ctx, p)
	if err != nil {
		apiError(w, http.StatusBadGateway, err)
		return
	}
	values := res.Completion.Values
	if values == nil {
		values = []string{}
	}
	writeJSON(w, map[string]any{"values": values, "total": res.Completion.Total, "hasMore": res.Completion.HasMore})
}

func (s *Server) handleTasks(w http.ResponseWriter, r *http.Request) {
	c, ok := s.client(w, r.URL.Query().Get("server"))
	if !ok {
		return
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	tasks, err := c.ListTasks(ctx)
	if err != nil {
		apiError(w, http.StatusBadGateway, err)
		return
	}
	if tasks == nil {
		tasks = []mcpadapter.Task{}
	}
	writeJSON(w, map[string]any{"tasks": tasks})
}

func (s *Server) handleCancelTask(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Server string `json:"server"`
		TaskID string `json:"taskId"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	c, ok := s.client(w, req.Server)
	if !ok {
		return
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	t, err := c.CancelTask(ctx, req.TaskID)
	if err != nil {
		apiError(w, http.StatusBadGateway, err)
		return
	}
	writeJSON(w, t)
}

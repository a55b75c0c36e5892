package mcpadapter

import (
	"context"
	"errors"
)

// An Adapter turns the tools of an MCP server into tools for an agent.
//
// An Adapter governs discovery, not the tools' lifetime: tools returned by
// Tools keep working after Close, reconnecting on their next call.
type Adapter struct {
	client *Client
	cfg    adapterConfig
}

// Option configures an Adapter.
type Option func(*adapterConfig)

type adapterConfig struct {
	filter func(server string, tool *Tool) bool
}

// WithToolFilter keeps only the tools for which keep returns true. It sees
// each tool before it is renamed for the model.
func WithToolFilter(keep func(server string, tool *Tool) bool) Option {
	return func(c *adapterConfig) { c.filter = keep }
}

// New returns an Adapter for target. The transport is inferred:
//
//   - string or *url.URL: an http(s) URL. A path ending in /sse uses the
//     legacy HTTP+SSE transport; any other uses streamable HTTP, falling
//     back to HTTP+SSE when the server answers as a legacy server does. A
//     string never starts a process.
//   - Command (see also Script): a local server over stdio.
//   - *mcp.Server: a go-sdk server, run in-process.
//   - *Client: a client built with NewClient and its options.
//
// New does not connect; Tools does.
func New(target any, opts ...Option) (*Adapter, error) {
	var cfg adapterConfig
	for _, o := range opts {
		o(&cfg)
	}
	if c, ok := target.(*Client); ok {
		if c == nil {
			return nil, &TargetError{Target: "(nil *mcpadapter.Client)", Reason: "want " + acceptedTargets}
		}
		return &Adapter{client: c, cfg: cfg}, nil
	}
	c, err := NewClient(target, ClientOptions{})
	if err != nil {
		return nil, err
	}
	return &Adapter{client: c, cfg: cfg}, nil
}

// Tools connects if needed and returns the server's tools, named for a
// model. Two tools that would get the same name are a *NameCollisionError.
func (a *Adapter) Tools(ctx context.Context) ([]*Tool, error) {
	listed, err := a.client.Tools(ctx)
	if err != nil {
		return nil, err
	}
	return finishTools(listed, "", a.cfg.filter)
}

// finishTools filters tools, gives them their model names with prefix, and
// rejects collisions.
func finishTools(tools []*Tool, prefix string, keep func(string, *Tool) bool) ([]*Tool, error) {
	out := tools[:0]
	seen := make(map[string]*Tool, len(tools))
	for _, t := range tools {
		if keep != nil && !keep(t.Server, t) {
			continue
		}
		t.Name = modelToolName(prefix, t.OriginalName)
		if prev, dup := seen[t.Name]; dup {
			return nil, &NameCollisionError{Name: t.Name, First: prev.Server + "/" + prev.OriginalName, Second: t.Server + "/" + t.OriginalName}
		}
		seen[t.Name] = t
		out = append(out, t)
	}
	return out, nil
}

// Info describes the adapter's connections, connecting first if needed.
type Info struct {
	// Era is the protocol era of the adapter: that of its oldest server.
	Era Era
	// Servers describes each connection.
	Servers []ServerInfo
}

// Info connects if needed and describes the connections.
func (a *Adapter) Info(ctx context.Context) (*Info, error) {
	si, err := a.client.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &Info{Era: si.Era, Servers: []ServerInfo{*si}}, nil
}

// Client returns the client behind the adapter, for prompts, resources,
// completion and everything else the adapter does not wrap.
func (a *Adapter) Client() *Client { return a.client }

// Close ends the adapter's live connections. Tools stay callable.
func (a *Adapter) Close() error {
	return errors.Join(a.client.Close())
}

package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// do runs fn on the live session, connecting first if needed. A request
// that certainly never reached the server (the write failed, the HTTP
// connection could not be made, the server answered this very request
// with 404 for an expired session) is retried once; a request the server
// may have seen is never sent twice. A lost connection is dropped, so the
// next request reconnects. Errors from the server (JSON-RPC errors) are
// returned as they are; everything else becomes a *TransportError.
func (c *Client) do(ctx context.Context, op, tool string, fn func(context.Context, *session) error) error {
	return c.doWith(ctx, op, tool, c.opts.Timeout, fn)
}

// doWith is do with an explicit request timeout (zero: none).
func (c *Client) doWith(ctx context.Context, op, tool string, timeout time.Duration, fn func(context.Context, *session) error) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, timeout, fmt.Errorf("no answer within %v (ClientOptions.Timeout): %w", timeout, context.DeadlineExceeded))
		defer cancel()
	}
	for attempt := 0; ; attempt++ {
		s, err := c.session(ctx)
		if err != nil {
			return err
		}
		rec := &requestRecord{}
		err = s.run(context.WithValue(ctx, requestRecordKey{}, rec), fn)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			cause := context.Cause(ctx)
			if cause == ctx.Err() {
				cause = fmt.Errorf("%w (%v)", cause, err)
			}
			return c.transportError(s, op, tool, cause)
		}
		if s.life.Err() != nil {
			// Another request found the connection dead and closed it: say
			// how the server ended, when we know.
			if s.stdio != nil {
				if rerr := s.stdio.ReadError(); rerr != nil {
					return c.transportError(s, op, tool, rerr)
				}
			}
			return c.transportError(s, op, tool, fmt.Errorf("%w: the connection was closed while the request was in flight", mcp.ErrConnectionClosed))
		}
		if isServerError(err) {
			return err
		}
		// ErrSessionMissing also fails calls whose own POST was accepted
		// (go-sdk fails the whole connection on any 404): only a 404 to
		// this request's POST proves the server did not run it.
		expired := errors.Is(err, mcp.ErrSessionMissing) && rec.status.Load() == 404
		notSent := wasNotSent(err) || expired
		// A write that failed on a stdio pipe means the process is gone.
		lost := s.ended() || (notSent && s.stdio != nil) || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing)
		if lost {
			c.drop(s)
		}
		if attempt == 0 && notSent {
			c.log.Debug("request not delivered; retrying", "op", op, "cause", redactURLSecrets(err.Error()))
			continue
		}
		return c.transportError(s, op, tool, err)
	}
}

// requestRecord is what the HTTP tap learns about one request's own POST.
type requestRecord struct {
	status atomic.Int32
}

type requestRecordKey struct{}

// run calls fn with a context that also ends when the session is closed.
func (s *session) run(ctx context.Context, fn func(context.Context, *session) error) error {
	s.inflight.Add(1)
	defer s.doneRequest()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.life, cancel)
	defer stop()
	return fn(ctx, s)
}

// isServerError reports whether err is a JSON-RPC error response from the
// server, as opposed to a failure to talk to it. go-sdk reports HTTP
// failures (refused connections, 5xx, 429) as the JSON-RPC error
// "rejected by transport" (-32005); those are transport failures.
func isServerError(err error) bool {
	if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) {
		return false
	}
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		return false
	}
	return !(we.Code == codeRejectedByTransport && we.Message == "rejected by transport")
}

// codeRejectedByTransport is go-sdk's code for a request its HTTP client
// could not deliver or got a non-JSON-RPC failure for.
const codeRejectedByTransport = -32005

// CallTool calls the tool the server knows as name with args, a JSON object
// (empty means {}). See Tool.Call for what it returns.
func (c *Client) CallTool(ctx context.Context, name string, args json.RawMessage, opts ...CallOption) (*Result, error) {
	cfg := callConfig{modelName: name, interruptible: true}
	for _, o := range opts {
		o(&cfg)
	}
	return c.callTool(ctx, name, args, cfg)
}

func (c *Client) callTool(ctx context.Context, name string, args json.RawMessage, cfg callConfig) (*Result, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = json.RawMessage("{}")
	}
	if err := checkArguments(args); err != nil {
		return errorResult(fmt.Sprintf("Invalid arguments for tool %q: %v. Send a JSON object that matches the tool's input schema.", name, err)), nil
	}
	if c.interrupt != nil && cfg.interruptible {
		return c.callInterruptible(ctx, name, args, cfg)
	}
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	if cfg.meta != nil {
		params.Meta = cfg.meta
	}
	defer c.withProgress(params, cfg)()
	var res *mcp.CallToolResult
	err := c.do(ctx, "tools/call", name, func(ctx context.Context, s *session) error {
		var err error
		res, err = s.cs.CallTool(ctx, params)
		return err
	})
	if err != nil {
		var we *jsonrpc.Error
		if isServerError(err) && errors.As(err, &we) {
			return errorResult(fmt.Sprintf("Error calling tool %q: %s (MCP error %d)", name, we.Message, we.Code)), nil
		}
		return nil, err
	}
	return convertResult(c.name, name, res)
}

// withProgress gives params a progress token when anyone listens; release
// must be called when the call ends.
func (c *Client) withProgress(params *mcp.CallToolParams, cfg callConfig) (release func()) {
	if cfg.progress == nil && c.opts.ProgressHandler == nil {
		return func() {}
	}
	fn := cfg.progress
	if fn == nil {
		fn = func(Progress) {}
	}
	tok, release := c.progressToken(params.Name, fn)
	params.SetProgressToken(tok)
	return release
}

// checkArguments reports whether args is one JSON object.
func checkArguments(args json.RawMessage) error {
	if args[0] != '{' {
		return errors.New("arguments must be a JSON object")
	}
	if !json.Valid(args) {
		return errors.New("arguments are not valid JSON")
	}
	return nil
}

func errorResult(text string) *Result {
	return &Result{IsError: true, Content: []Content{&TextContent{Text: text}}}
}

// ListTools returns every tool the server offers, all pages of tools/list,
// as go-sdk decoded them.
func (c *Client) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	tools, err := listAll(ctx, c, "tools/list", func(ctx context.Context, s *session, cursor string) ([]*mcp.Tool, string, error) {
		res, err := s.cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Tools, res.NextCursor, nil
	})
	if err != nil {
		return nil, c.serverErr(err, "tools/list")
	}
	return tools, nil
}

// maxPages bounds a paginated listing.
const maxPages = 1000

// listAll returns every item of the listing method, asking page for each
// page. With the response cache, a cached first page may carry a cursor
// the server no longer accepts (its next page was evicted, or the server
// forgot the cursor): when a later page fails with a server error, the
// whole listing is asked anew, once, bypassing the cached pages.
func listAll[T any](ctx context.Context, c *Client, method string, page func(context.Context, *session, string) ([]T, string, error)) ([]T, error) {
	var out []T
	err := c.do(ctx, method, "", func(ctx context.Context, s *session) error {
		for attempt := 0; ; attempt++ {
			var (
				failedPage int
				err        error
			)
			out, failedPage, err = listPagesOnce(withListPages(ctx), s, method, out[:0], page)
			if err == nil || attempt > 0 || failedPage == 0 || c.cache == nil || cacheModeOf(ctx) != CacheUse || !isServerError(err) {
				return err
			}
			c.log.Debug("a later page of a cached listing failed; listing anew from the server", "op", method, "page", failedPage, "cause", redactURLSecrets(err.Error()))
			ctx = WithCacheMode(ctx, CacheRefresh)
		}
	})
	return out, err
}

// listPagesOnce appends every page of a listing to out. On failure it
// returns the index of the page that failed.
func listPagesOnce[T any](ctx context.Context, s *session, method string, out []T, page func(context.Context, *session, string) ([]T, string, error)) ([]T, int, error) {
	cursor := ""
	for n := 0; ; n++ {
		if n >= maxPages {
			return out, n, fmt.Errorf("%s returned more than %d pages; giving up (a cursor loop?)", method, maxPages)
		}
		items, next, err := page(ctx, s, cursor)
		if err != nil {
			return out, n, err
		}
		out = append(out, items...)
		if next == "" {
			return out, n, nil
		}
		if next == cursor {
			return out, n, fmt.Errorf("%s returned the same cursor %q twice", method, next)
		}
		cursor = next
	}
}

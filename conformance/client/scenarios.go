package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// newClient returns an mcpadapter Client for the scenario's server. The
// transport is inferred from the URL, as for any user of the adapter.
func newClient(url string, opts mcpadapter.ClientOptions) (*mcpadapter.Client, error) {
	opts.Name = "conformance"
	// The redacted protocol trace goes to stderr, which the suite keeps
	// with each scenario's results, unless CONFORMANCE_TRACE is 0: a
	// trace keeps the HTTP fast path off (it would show a call handed
	// over to go-sdk twice), and the pass of the suite that tests the
	// fast path runs without it.
	opts.Trace = os.Getenv("CONFORMANCE_TRACE") != "0"
	opts.HTTPClient = recording(opts.HTTPClient)
	if opts.ConnectTimeout == 0 {
		opts.ConnectTimeout = 20 * time.Second
	}
	// The suite says which protocol it runs at: a handshake-era version
	// means initialize, with no server/discover probe first.
	if v := os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"); v != "" && v < "2026-07-28" {
		opts.ProtocolVersion = v
	} else if opts.ProbeTimeout == 0 {
		// Every server of a 2026-07-28 (or extension) scenario answers
		// server/discover; on a loaded machine the suite's mock servers
		// can take longer than the default 5 seconds to do it.
		opts.ProbeTimeout = 15 * time.Second
	}
	return mcpadapter.NewClient(url, &opts)
}

// tools lists the server's tools through the adapter and returns them by
// the server's own names.
func tools(ctx context.Context, c *mcpadapter.Client) (map[string]*mcpadapter.Tool, []*mcpadapter.Tool, error) {
	list, err := c.Tools(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("Client.Tools: %w", err)
	}
	byName := make(map[string]*mcpadapter.Tool, len(list))
	for _, t := range list {
		byName[t.OriginalName] = t
	}
	return byName, list, nil
}

// withTools connects with opts, lists the tools and runs fn with them by
// the server's own names and in listing order; the client is closed after.
func withTools(ctx context.Context, url string, opts mcpadapter.ClientOptions,
	fn func(c *mcpadapter.Client, byName map[string]*mcpadapter.Tool, list []*mcpadapter.Tool) error) error {
	c, err := newClient(url, opts)
	if err != nil {
		return err
	}
	defer c.Close()
	byName, list, err := tools(ctx, c)
	if err != nil {
		return err
	}
	return fn(c, byName, list)
}

// call calls the tool the server names name and fails on a tool error as
// well as a transport error.
func call(ctx context.Context, byName map[string]*mcpadapter.Tool, name string, args json.RawMessage) (*mcpadapter.Result, error) {
	t, ok := byName[name]
	if !ok {
		return nil, fmt.Errorf("tool %q not listed", name)
	}
	res, err := t.Call(ctx, args)
	if err != nil {
		return nil, fmt.Errorf("Tool(%q).Call: %w", name, err)
	}
	if res.IsError {
		return res, fmt.Errorf("Tool(%q).Call: tool error: %s", name, res.Text())
	}
	return res, nil
}

// runInitialize connects (the initialize handshake, or server/discover)
// and lists tools.
func runInitialize(ctx context.Context, url string, _ scenarioContext) error {
	c, err := newClient(url, mcpadapter.ClientOptions{})
	if err != nil {
		return err
	}
	defer c.Close()
	info, err := c.Connect(ctx)
	if err != nil {
		return fmt.Errorf("Client.Connect: %w", err)
	}
	log.Printf("connected: protocol %s, server %v", info.ProtocolVersion, info.Implementation)
	_, _, err = tools(ctx, c)
	return err
}

// runToolsCall lists tools and calls add_numbers.
func runToolsCall(ctx context.Context, url string, _ scenarioContext) error {
	return withTools(ctx, url, mcpadapter.ClientOptions{}, func(_ *mcpadapter.Client, byName map[string]*mcpadapter.Tool, _ []*mcpadapter.Tool) error {
		res, err := call(ctx, byName, "add_numbers", json.RawMessage(`{"a":5,"b":3}`))
		if err != nil {
			return err
		}
		log.Printf("add_numbers: %s", res.Text())
		return nil
	})
}

// runRequestMetadata connects: the scenario checks the per-request _meta
// and MCP-Protocol-Version header of the 2026-07-28 wire, and that the
// client retries with a supported version after a -32022 rejection. Both
// happen in go-sdk's connect, which the adapter drives. Roots, sampling and
// elicitation are set so that the capabilities declared in _meta are
// checked too.
func runRequestMetadata(ctx context.Context, url string, _ scenarioContext) error {
	c, err := newClient(url, mcpadapter.ClientOptions{
		//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but still declared in _meta
		Roots: []*mcp.Root{{URI: "file:///conformance", Name: "conformance"}},
		//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but still declared in _meta
		SamplingHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, errors.New("not used")
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	if err != nil {
		return err
	}
	defer c.Close()
	info, err := c.Connect(ctx)
	if err != nil {
		return fmt.Errorf("Client.Connect: %w", err)
	}
	log.Printf("connected: protocol %s", info.ProtocolVersion)
	return nil
}

// runElicitationDefaults accepts a form elicitation with no values: the
// client must fill in the schema's defaults (SEP-1034). go-sdk does that
// for a handler given through ClientOptions.ElicitationHandler.
func runElicitationDefaults(ctx context.Context, url string, _ scenarioContext) error {
	opts := mcpadapter.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
		},
	}
	return withTools(ctx, url, opts, func(_ *mcpadapter.Client, byName map[string]*mcpadapter.Tool, _ []*mcpadapter.Tool) error {
		_, err := call(ctx, byName, "test_client_elicitation_defaults", nil)
		return err
	})
}

// runSSERetry calls a tool whose SSE stream the server closes before the
// result: the client must reconnect after the announced retry delay with
// Last-Event-ID.
func runSSERetry(ctx context.Context, url string, _ scenarioContext) error {
	return withTools(ctx, url, mcpadapter.ClientOptions{}, func(_ *mcpadapter.Client, byName map[string]*mcpadapter.Tool, _ []*mcpadapter.Tool) error {
		_, err := call(ctx, byName, "test_reconnection", nil)
		return err
	})
}

// runJSONSchemaRefNoDeref lists tools whose schemas $ref network URLs: the
// client must not fetch them. The adapter keeps schemas as the bytes the
// server sent and never resolves a $ref.
func runJSONSchemaRefNoDeref(ctx context.Context, url string, _ scenarioContext) error {
	return withTools(ctx, url, mcpadapter.ClientOptions{}, func(_ *mcpadapter.Client, _ map[string]*mcpadapter.Tool, list []*mcpadapter.Tool) error {
		log.Printf("listed %d tools", len(list))
		return nil
	})
}

// runJSONSchemaPreservation echoes the focal tool's input schema, as
// Tool.InputSchema holds it (verbatim), through json_schema_echo so that
// the referee can see which 2020-12 keywords survived.
func runJSONSchemaPreservation(ctx context.Context, url string, _ scenarioContext) error {
	return withTools(ctx, url, mcpadapter.ClientOptions{}, func(_ *mcpadapter.Client, byName map[string]*mcpadapter.Tool, _ []*mcpadapter.Tool) error {
		focal, ok := byName["json_schema_2020_12_tool"]
		if !ok {
			return errors.New(`tool "json_schema_2020_12_tool" not listed`)
		}
		args, err := json.Marshal(map[string]json.RawMessage{"schema": focal.InputSchema})
		if err != nil {
			return err
		}
		_, err = call(ctx, byName, "json_schema_echo", args)
		return err
	})
}

// runRequestState drives the SEP-2322 multi-round-trip tools with the
// adapter's ElicitInterrupt mode: a call the server answers with
// input_required returns an *InputRequiredError, and Tool.Resume retries
// it with the answers and the server's requestState. The scenario checks
// the retry (state echoed, or omitted when none was sent; a new JSON-RPC
// id), that an unrelated call carries none of it, and that a result
// without resultType is taken as complete.
func runRequestState(ctx context.Context, url string, _ scenarioContext) error {
	c, err := newClient(url, mcpadapter.ClientOptions{})
	if err != nil {
		return err
	}
	a, err := mcpadapter.New(c, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
	if err != nil {
		return err
	}
	defer a.Close()
	list, err := a.Tools(ctx)
	if err != nil {
		return fmt.Errorf("Adapter.Tools: %w", err)
	}
	byName := make(map[string]*mcpadapter.Tool, len(list))
	for _, t := range list {
		byName[t.OriginalName] = t
	}
	var errs []error
	for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
		t, ok := byName[name]
		if !ok {
			errs = append(errs, fmt.Errorf("tool %q not listed", name))
			continue
		}
		res, err := callAnswering(ctx, t, nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("tool %q: %w", name, err))
			continue
		}
		log.Printf("%s: isError=%v %s", name, res.IsError, res.Text())
	}
	return errors.Join(errs...)
}

// callAnswering calls t and answers the server's questions until the call
// completes, at most a few rounds.
func callAnswering(ctx context.Context, t *mcpadapter.Tool, args json.RawMessage) (*mcpadapter.Result, error) {
	res, err := t.Call(ctx, args)
	for round := 0; round < 5; round++ {
		var ir *mcpadapter.InputRequiredError
		if !errors.As(err, &ir) {
			return res, err
		}
		log.Printf("%s: the server asked %d question(s) (request state %q); resuming", t.OriginalName, len(ir.Pending.Requests), ir.Pending.RequestState)
		resume := &elicitation.Resume{Responses: make(map[string]elicitation.Response)}
		for _, r := range ir.Pending.Requests {
			resume.Responses[r.Key] = answer(r)
		}
		res, err = t.Resume(ctx, ir.Pending, resume)
	}
	return nil, errors.New("the server kept asking questions")
}

// runHTTPStandardHeaders makes one request of each kind (tools, resources,
// prompts) so that the referee sees the Mcp-Method and Mcp-Name headers
// (SEP-2243) on each.
func runHTTPStandardHeaders(ctx context.Context, url string, _ scenarioContext) error {
	c, err := newClient(url, mcpadapter.ClientOptions{})
	if err != nil {
		return err
	}
	defer c.Close()
	if _, list, err := tools(ctx, c); err == nil && len(list) > 0 {
		if _, err := list[0].Call(ctx, nil); err != nil {
			log.Printf("Tool(%q).Call: %v", list[0].OriginalName, err)
		}
	} else if err != nil {
		log.Print(err)
	}
	if rs, err := c.ListResources(ctx); err == nil && len(rs) > 0 {
		if _, err := c.ReadResource(ctx, rs[0].URI); err != nil {
			log.Printf("Client.ReadResource(%q): %v", rs[0].URI, err)
		}
	} else if err != nil {
		log.Printf("Client.ListResources: %v", err)
	}
	if ps, err := c.ListPrompts(ctx); err == nil && len(ps) > 0 {
		if _, err := c.GetPrompt(ctx, ps[0].Name, map[string]string{}); err != nil {
			log.Printf("Client.GetPrompt(%q): %v", ps[0].Name, err)
		}
	} else if err != nil {
		log.Printf("Client.ListPrompts: %v", err)
	}
	return nil
}

// runHTTPCustomHeaders lists tools (go-sdk learns their x-mcp-header
// annotations from the listing) and makes the calls the suite asks for, so
// that the referee checks the Mcp-Param-* headers sent with each.
func runHTTPCustomHeaders(ctx context.Context, url string, sc scenarioContext) error {
	return withTools(ctx, url, mcpadapter.ClientOptions{}, func(c *mcpadapter.Client, _ map[string]*mcpadapter.Tool, _ []*mcpadapter.Tool) error {
		// The suite's arguments are sent as given, through Client.CallTool,
		// which does not check them against the tool's schema as Tool.Call
		// does for a model: the scenario sends a null for a boolean on
		// purpose, to see its header left out. A tool the adapter does not
		// list (like go-sdk, it drops tools whose header annotations are
		// invalid) is called by name the same way.
		for _, tc := range sc.ToolCalls {
			if res, err := c.CallTool(ctx, tc.Name, tc.Arguments, nil); err != nil {
				log.Printf("Client.CallTool(%q): %v", tc.Name, err)
			} else if res.IsError {
				log.Printf("Client.CallTool(%q): tool error: %s", tc.Name, res.Text())
			}
		}
		return nil
	})
}

// runHTTPInvalidToolHeaders lists tools, some of whose x-mcp-header
// annotations are invalid: those must not be offered, so calling every
// listed tool must never reach an invalid one.
func runHTTPInvalidToolHeaders(ctx context.Context, url string, _ scenarioContext) error {
	return withTools(ctx, url, mcpadapter.ClientOptions{}, func(_ *mcpadapter.Client, _ map[string]*mcpadapter.Tool, list []*mcpadapter.Tool) error {
		for _, t := range list {
			logCall(ctx, t, json.RawMessage(`{"region":"us-west1"}`))
		}
		return nil
	})
}

// logCall calls t and logs a failure; the referee judges the request.
func logCall(ctx context.Context, t *mcpadapter.Tool, args json.RawMessage) {
	if res, err := t.Call(ctx, args); err != nil {
		log.Printf("Tool(%q).Call: %v", t.OriginalName, err)
	} else if res.IsError {
		log.Printf("Tool(%q).Call: tool error: %s", t.OriginalName, res.Text())
	}
}

// Package mcpadapter turns the tools of MCP (Model Context Protocol)
// servers into tools a Go LLM agent can call.
//
// Give New a target — an http(s) URL, a Command (a local server over
// stdio), an in-process go-sdk *mcp.Server, an mcpServers *Config, or a
// *Client or *Group you configured — and Adapter.Tools returns one list of
// Tools: a name safe for model APIs, the description, the input schema
// byte for byte as the server sent it, and a Call method. Both protocol
// eras (the initialize handshake of 2025-11-25 and earlier, and the
// stateless server/discover of 2026-07-28) are negotiated per connection
// by go-sdk; a connection that is closed, expires or crashes is made again
// on the next call; stdio servers never outlive the process.
//
//	a, err := mcpadapter.New("https://example.com/mcp", nil)
//	if err != nil {
//		return err
//	}
//	defer a.Close() // ends connections; tools stay callable and reconnect
//	tools, err := a.Tools(ctx)
//	if err != nil {
//		return err
//	}
//	for _, t := range tools {
//		fmt.Println(t.Name, t.Description)
//	}
//	res, err := tools[0].Call(ctx, json.RawMessage(`{"city":"Paris"}`))
//	if err != nil {
//		return err // a transport failure: the model cannot act on it
//	}
//	fmt.Println(res.IsError, res.Text()) // a tool error is a result the model reads
//
// # Options
//
// Every constructor takes its options as a struct, as go-sdk, net/http and
// log/slog do, and a nil pointer means the defaults: New(target, *Options)
// for what the adapter does with tools (elicitation, filtering, servers
// that are down), NewClient(target, *ClientOptions) and
// NewGroup(cfg, *ClientOptions) for how to reach a server (auth, headers,
// timeouts, cache, handlers), and Tool.CallWith(ctx, args, *CallOptions)
// for one call (progress, _meta, timeouts). Settings that travel with a
// request through code you do not own are on the context, documented
// where they are set: WithCacheMode, WithCallIdentity.
//
// # Where things live
//
// The root package is the public face and the client lifecycle; machinery
// with plain inputs lives in internal packages the compiler keeps apart.
// Calls and imports point down this list only.
//
//	adapter.go      Adapter, Options, New: the tool list of one or several servers
//	group.go        Group: several servers, fan-out, one protocol era, prefixes
//	names.go        model-safe tool names
//	prepare.go      each server's listing made tools: filters, transforms,
//	                empty lists (NoToolsError), prefixes (PrefixMode)
//	transform*.go   tool transforms: names, descriptions, arguments
//	unavailable.go  transport failures as results (TransportErrorResult)
//	tool.go         Tool, Tool.Call, Client.Tools and ListTools
//	search*.go      tool search for large catalogs: ToolSearch, the
//	                search_tools/call_tool pair, Adapter.Search (index: toolsearch)
//	live.go         live tool lists: WatchTools, ToolsVersion, removed tools
//	call.go         CallOptions, Client.CallTool: where every tool call starts
//	identity.go     CallIdentity (principal, headers, _meta per call),
//	                PrincipalToken
//	timeout.go      a call's time limits: TimeoutError, reset on progress
//	resultlimit.go  big results: the text a model gets, cut with a note
//	telemetry.go    the Telemetry hook (operations, _meta), ErrorType
//	interrupt.go    ElicitInterrupt: PendingCall, InputRequiredError, Resume,
//	                multi-round-trip calls (2026-07-28)
//	park.go         handshake-era calls parked while the user answers
//	task.go         MCP tasks: TaskMode, TaskOptions, TaskHandle, Task, typed errors
//	task_call.go    a call as a task: create, poll, result, cancel; ResumeTask
//	task_input.go   a 2026-07-28 task's questions: interrupt, handlers, tasks/update
//	task_rpc.go     tasks/* as go-sdk custom methods; the "task" member of tools/call
//	tasks_list.go   Client.ListTasks, GetTask, CancelTask
//	request.go      send: the one function every request goes through (retry, loss)
//	fastcall.go     the fast path: a plain stdio tool call written and answered
//	                without go-sdk's request machinery (fastresult.go: its
//	                decoder; fastpath_*.go: the build tag that turns it off)
//	fasthttp*.go    the fast path over streamable HTTP: the POST, its answer,
//	                and the hand-over to go-sdk of an answer that is not plain
//	list.go         paginated listings
//	features.go     prompts, resources, completion
//	progress.go     per-call progress tokens and routing
//	connect*.go     sessions: connect, handshake deadlines, era fallback, reconnect
//	endpoint_hint.go  a URL that is not the MCP endpoint: say so, suggest one
//	client.go       Client, NewClient: options to go-sdk, Close
//	options.go      ClientOptions
//	target.go       target inference (URL, Command, *mcp.Server, ...)
//	command.go      Command and Script (stdio servers)
//	stdio.go, backlog.go   a stdio connection's settings and its flow control
//	                (the transport itself: internal/stdio)
//	auth.go         Auth: BearerToken, AuthFunc, credentials kept on their origin
//	oauth*.go       OAuth, TokenStore, AuthorizationError (the flow: internal/oauthflow)
//	auth_grants.go  ClientCredentials, JWTBearer, EnterpriseAuth, DPoP keys: grants
//	                without a user (internal/oauthflow: grant*.go, jose*.go, dpop.go)
//	config_grants.go  GrantSettings: those grants in a config's "auth"
//	skills.go       Client.Skills, Client.Skill, Client.SkillFile (SEP-2640; the
//	                checks: internal/skillmd)
//	apps.go         MCP Apps: Tool.UI, Tool.ModelVisible, Client.ReadUIResource
//	cache*.go       the opt-in response cache (SEP-2549 hints)
//	config*.go      Config, ServerConfig, LoadConfig (the parser: internal/config)
//	content.go, convert.go, result.go   Result, Content, Artifact and their conversion
//	errors.go       typed errors; sdkerrors.go: go-sdk errors recognised by text
//	info.go         Era and ServerInfo
//	internal/stdio       the stdio process transport: line filter, stderr tail, process group
//	internal/wire        protocol trace, HTTP tap (size limits), redaction, results as sent
//	internal/oauthflow   the OAuth sign-in: loopback redirect, token files
//	internal/config      the mcpServers document parser, with positions
//	internal/jsonscan    skipping JSON text without decoding it (stdio, wire)
//	internal/sealed      AES-GCM sealing of the tokens the store modules keep
//	internal/testdb      real redis-server and postgres processes for tests
//	internal/jsontree    the ordered JSON tree schemaprofile and the eino binding rewrite schemas in
//	internal/skillmd     skill files against their listing: size, digest, frontmatter
//	internal/taskserver  a 2026-07-28 Tasks-extension server on go-sdk, for tests
//	internal/tripserver  the in-process MCP server of the agent examples (langchaingo, genkit)
//	internal/bindingtest the binding modules' test set-up: an adapter's tools from a target
//
// Package toolsearch ranks tools against a query (BM25F, standard library
// only). Package schemaprofile rewrites input schemas for model providers
// (OpenAI strict and not, Anthropic, Gemini) and lists what it changed.
// Package toolcall runs one model turn's tool calls for the SDK bindings
// (bounded, in call order; outcomes; content as text).
// Package elicitation holds the interrupt payload and answers. The
// binding modules give the tools to eino's agents (eino), the model SDKs
// of OpenAI, Anthropic and Gemini (openai, anthropic, gemini), Genkit
// (genkit) and langchaingo (langchaingo); the otel module reports to
// OpenTelemetry; redisstore and pgstore keep shared state for several
// replicas; cmd/mcpadapter is the CLI.
package mcpadapter

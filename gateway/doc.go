// Package gateway serves many MCP servers as one MCP endpoint.
//
// A Gateway is a client of its servers and a server to its clients. Toward
// the servers it uses mcpadapter's Client (one connection per server,
// shared by every client of the gateway, each server at its own protocol
// version, stdio children started once and re-established when they end).
// Toward the clients it is a go-sdk server: ServeHTTP answers streamable
// HTTP clients of the initialize-handshake era (2025-11-25 and earlier:
// sessions, resumable event streams) and of 2026-07-28 (stateless,
// server/discover) on one endpoint, and ServeStdio serves one client over
// standard input and output.
//
//	cfg, err := mcpadapter.LoadConfig("mcp.json")
//	if err != nil {
//		return err
//	}
//	gw, err := gateway.New(gateway.FromConfig(cfg), nil)
//	if err != nil {
//		return err
//	}
//	defer gw.Close()
//	if err := gw.Start(ctx); err != nil {
//		return err // a tool name claimed by two servers
//	}
//	http.ListenAndServe("127.0.0.1:8080", gw)
//
// # What clients see
//
// The tools, prompts, resources, resource templates and completions of
// every server that is up, as one server: tool and prompt names follow
// mcpadapter's naming rules (Options.Prefix, the config's "prefix",
// transforms, includeTools and excludeTools), resource URIs are the
// servers' own. A server that fails to start, or whose connection ends, is
// reported (Options.OnEvent, Gateway.Servers) and its tools leave the list
// with a list_changed notification until it is back.
//
// # What flows back
//
// Progress, log messages, sampling, roots and elicitation requests reach
// the client whose request caused them, whatever the two versions:
//
//   - A 2026-07-28 server's input_required result goes to a 2026-07-28
//     client as it is; to a handshake-era client the gateway sends each
//     question as a request (elicitation/create, sampling/createMessage,
//     roots/list) and retries the server's call with the answers.
//   - A handshake-era server's elicitation/create, sampling/createMessage
//     or roots/list during a call goes to a handshake-era client as the
//     same request; to a 2026-07-28 client it becomes an input_required
//     result: the server's call waits in the gateway (at most
//     Options.ParkTimeout), keyed by the request state the client echoes
//     back with its answer.
//
// A handshake-era server's request names no call, so the gateway tells
// whose it is by which calls are in flight on the connection it came on:
// a call from a client that can be asked runs on a connection only while
// every call in flight there is from the same client (see lane.go). Such
// a call that may not run on the server's shared connection runs on an
// extra connection to the server, opened for it up to
// Options.MaxExtraConnections (pool.go), and waits only past that. Calls
// from clients that cannot be asked run side by side.
//
// # Safety on a host
//
// ServeHTTP accepts only loopback Host names (and Options.AllowedHosts),
// refuses a browser Origin that is not the gateway's own or listed in
// Options.AllowedOrigins, bounds request bodies (Options.MaxRequestBytes),
// in-flight calls per server and per client session, and never takes a
// command or a URL from a request: the servers are the configured ones.
// Errors name what was wrong (an unknown tool with the known ones, a server
// that is down with its name) without the servers' URLs' secrets or
// headers.
package gateway

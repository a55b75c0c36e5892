// Package stdio runs an MCP server as a child process and speaks JSON-RPC
// with it over its stdin and stdout: Transport is a go-sdk mcp.Transport,
// and each Connect starts a new process whose connection is a *Conn.
//
// What it adds to go-sdk's CommandTransport:
//   - a line of stdout that is not a JSON-RPC message (a server logging to
//     stdout) is skipped and reported, not fatal; the last few are kept
//     and explain a connection that fails after them (StrayOutputError);
//     reports are rate-limited (Transport.OnSkip: ten per ten seconds one
//     by one, then a summary with the count; LogSkip logs them);
//   - a response that cannot be decoded (NaN, a truncated line, nesting
//     deeper than go-sdk decodes) fails its call at once with the reason,
//     when its id can be read, instead of leaving it to wait;
//   - a message over MaxMessageBytes is skipped without ending the
//     connection, and if it is a response its call fails with a clear
//     error instead of waiting forever;
//   - a write waits for its turn and writes within its context: a server
//     that stops reading its stdin cannot hold a call past its deadline,
//     and a line cut in the middle ends the connection (CutOffError);
//   - the requests the server sends are bounded: at most MaxHeldRequests
//     are held while they are answered, and a server that sends more ends
//     the connection (OverloadError);
//   - the last lines of stderr are kept (Conn.Stderr), and the end of
//     stdout becomes an error that says how the process ended (ExitError);
//   - the process runs in its own process group, which Close ends (stdin
//     closed, then SIGTERM, then SIGKILL) whatever its pipes do, returning
//     when no process of the group is left, so wrapper processes (npx,
//     uvx, shells) leave no orphans; on Linux the child is also killed
//     when this process dies, and on every Unix a watcher process in the
//     group kills the whole group then (see watcher; a process that
//     leaves the group with setsid or setpgid is not covered then, but
//     on Linux Close ends it too: see strays);
//   - a server that floods the client with notifications is slowed down
//     while they wait for their handlers (Conn.MessageHandled);
//   - with Transport.Marks, a response read after a request or
//     notification comes after a marker (internal/order), which the
//     caller waits for.
//
// What it does not do: it does not reconnect. A connection whose process
// has ended stays ended; starting a new one (and deciding when to) is the
// caller's business, as are naming the server in errors and the logger
// LogSkip writes to.
//
// It imports go-sdk's jsonrpc and mcp packages, internal/jsonscan,
// internal/order and the standard library only; never the root package.
package stdio

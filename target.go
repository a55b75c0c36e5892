package mcpadapter

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/servername"
	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// defaultName is the server name used when the caller gives none.
func defaultName(e *engine.Endpoint) string {
	switch e.Kind {
	case engine.Stdio:
		return Command(e.Command).Name()
	case engine.InProcess:
		return "in-process"
	}
	if u, err := url.Parse(e.URL); err == nil {
		return u.Host
	}
	return e.URL
}

// acceptedTargets lists what New and NewClient accept, for error messages.
const acceptedTargets = "an http(s) URL (string or *url.URL), mcpadapter.Command, *mcp.Server, *mcpadapter.Config, *mcpadapter.Client or *mcpadapter.Group"

// resolveEndpoint infers the transport of a single-server target.
func resolveEndpoint(target any) (*engine.Endpoint, error) {
	switch t := target.(type) {
	case string:
		return orTargetError(engine.ParseEndpoint(t))
	case *url.URL:
		if t == nil {
			return nil, &TargetError{Target: "(nil *url.URL)", Reason: "want " + acceptedTargets}
		}
		return orTargetError(engine.URLEndpoint(t.String(), t))
	case Command:
		if t.Path == "" {
			return nil, &TargetError{Target: "mcpadapter.Command{}", Reason: "Command.Path is empty"}
		}
		return &engine.Endpoint{Kind: engine.Stdio, Command: engine.Command(t)}, nil
	case *Command:
		if t == nil {
			return nil, &TargetError{Target: "(nil *mcpadapter.Command)", Reason: "want " + acceptedTargets}
		}
		return resolveEndpoint(*t)
	case *mcp.Server:
		if t == nil {
			return nil, &TargetError{Target: "(nil *mcp.Server)", Reason: "want " + acceptedTargets}
		}
		return &engine.Endpoint{Kind: engine.InProcess, Server: t}, nil
	case nil:
		return nil, &TargetError{Target: "nil", Reason: "want " + acceptedTargets}
	default:
		return nil, &TargetError{Target: fmt.Sprintf("of type %T", target), Reason: "unsupported; want " + acceptedTargets}
	}
}

// orTargetError returns ep, or the *TargetError of target and reason when
// there is none.
func orTargetError(ep *engine.Endpoint, target, reason string) (*engine.Endpoint, error) {
	if ep == nil {
		return nil, &TargetError{Target: target, Reason: reason}
	}
	return ep, nil
}

// Command is a target that runs a local MCP server as a child process and
// talks to it over stdin/stdout (the stdio transport).
//
// The child does not inherit this process's whole environment, which
// holds API keys, cloud credentials and tokens a server has no business
// with: it gets the variables the official MCP SDKs pass (HOME, LOGNAME,
// PATH, SHELL, TERM and USER; on Windows APPDATA, HOMEDRIVE, HOMEPATH,
// LOCALAPPDATA, PATH, PROCESSOR_ARCHITECTURE, PROGRAMFILES, SYSTEMDRIVE,
// SYSTEMROOT, TEMP, USERNAME and USERPROFILE), those InheritEnv names,
// and Env. It runs in its own process group, which is killed when the connection
// closes, so wrapper processes (npx, uvx, shells) do not leave orphans; on
// Linux it is also killed if this process dies. Whatever it writes to stderr
// is kept (the last ClientOptions.StderrLines lines) and shown in errors.
type Command struct {
	// Path is the program to run, looked up in PATH if it has no slash.
	Path string
	// Args are the arguments, not including the program name.
	Args []string
	// Env holds "KEY=value" entries for the child's environment.
	Env []string
	// InheritEnv names more variables of this process's environment the
	// child gets: names ("GITHUB_TOKEN"), prefixes ending in "*"
	// ("AWS_*"), or "*" for the whole environment.
	InheritEnv []string
	// Dir is the working directory; empty means this process's.
	Dir string
}

// Script returns the Command that runs the script at path with args:
// ".py" with python3, ".js", ".mjs" and ".cjs" with node, ".ts" with npx tsx,
// and anything else as an executable.
func Script(path string, args ...string) Command {
	p, a := engine.Script(path, args)
	return Command{Path: p, Args: a}
}

// String returns the command line, for messages.
func (c Command) String() string {
	return strings.Join(append([]string{c.Path}, c.Args...), " ")
}

// Name returns the name a Client gives the server c runs when
// ClientOptions.Name is empty: the package or script it starts, not the
// interpreter that runs it. For `node …/server-filesystem/dist/index.js`
// that is the "name" of the package.json the script belongs to
// ("server-filesystem", its npm scope left out); for `npx -y
// @scope/pkg@1.2`, `uvx pkg`, `pipx run pkg`, `bunx pkg`, `deno run
// …/main.ts`, `python3 -m pkg.server` or `python3 server.py`, the package,
// module or script ("pkg", "pkg.server" as "pkg_server", "server"); for
// any other program, its file name without extension. The result matches
// ^[A-Za-z0-9_-]{1,64}$ and depends only on the command line and the
// files it names, so it is the same from run to run.
func (c Command) Name() string { return servername.FromCommand(c.Path, c.Args) }

// ServerNameFrom sanitises a server's own name (serverInfo.name) for use
// as ClientOptions.Name: bytes outside [A-Za-z0-9_-] become '_' and it is
// cut to 64 bytes; "" stays "".
func ServerNameFrom(name string) string {
	if strings.TrimSpace(name) == "" {
		return ""
	}
	return servername.Sanitize(name)
}

// stdioTransport returns the transport that runs cmd, with the client's
// options.
func (c *Client) stdioTransport(cmd engine.Command) stdio.Transport {
	var onStderr func(string)
	if h := c.opts.StderrHandler; h != nil {
		server := c.name
		onStderr = func(line string) { h(server, line) }
		if p := c.opts.naming; p != nil {
			onStderr = func(line string) { p.Do(len(line), func(name string) { h(name, line) }) }
		}
	}
	return stdio.Transport{
		Path:            cmd.Path,
		Args:            cmd.Args,
		Env:             cmd.Env,
		InheritEnv:      cmd.InheritEnv,
		Dir:             cmd.Dir,
		StderrLines:     c.opts.StderrLines,
		OnStderr:        onStderr,
		MaxMessageBytes: c.opts.MaxMessageBytes,
		StopGrace:       c.opts.closeGrace(),
		OnSkip:          stdio.LogSkip(c.log),
		Observer:        c.obs,
		// engine.BacklogMiddleware reports handled messages and reaches
		// the markers the engine gives each connection (Marks).
	}
}

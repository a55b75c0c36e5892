package mcpadapter

import (
	"os"
	"path/filepath"
	"strings"
)

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
	switch strings.ToLower(filepath.Ext(path)) {
	case ".py":
		return Command{Path: "python3", Args: append([]string{path}, args...)}
	case ".js", ".mjs", ".cjs":
		return Command{Path: "node", Args: append([]string{path}, args...)}
	case ".ts":
		return Command{Path: "npx", Args: append([]string{"-y", "tsx", path}, args...)}
	}
	if !strings.ContainsRune(path, os.PathSeparator) {
		path = "." + string(os.PathSeparator) + path
	}
	return Command{Path: path, Args: args}
}

// String returns the command line, for messages.
func (c Command) String() string {
	return strings.Join(append([]string{c.Path}, c.Args...), " ")
}

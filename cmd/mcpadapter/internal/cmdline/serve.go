package cmdline

import "github.com/mcpadapter/mcpadapter"

// ConfigFile returns the config file the command line names (--config,
// else ./.mcp.json, else ~/.config/mcpadapter/mcp.json), or "" when there
// is none.
func (a *App) ConfigFile() (string, error) { return a.findConfig() }

// BaseClientOptions returns the client options of the global flags
// (timeouts, logger) for a command that builds its own clients.
func (a *App) BaseClientOptions(oo OpenOptions) (mcpadapter.ClientOptions, error) {
	return a.clientOptions(oo)
}

// Verbose reports whether --verbose was given.
func (a *App) Verbose() bool { return a.verbose }

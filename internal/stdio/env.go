package stdio

import (
	"os"
	"runtime"
	"slices"
	"strings"
)

// SafeEnv is the part of this process's environment a server inherits by
// default: the variables the official TypeScript and Python SDKs pass to
// a stdio server, which let a program run (find its executables, its home
// directory, the user's name and shell, the terminal type) and carry no
// credentials. Everything else (API keys, cloud credentials, tokens) stays
// out unless the caller passes it.
func SafeEnv() []string {
	if runtime.GOOS == "windows" {
		return []string{"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PROCESSOR_ARCHITECTURE",
			"SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE", "PROGRAMFILES"}
	}
	return []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}
}

// Environ returns the environment of a server: the variables of environ
// (this process's, as os.Environ gives it) named by SafeEnv or matched by
// inherit, then extra ("KEY=value" entries, which win). An inherit entry
// is a variable name, a prefix ending in "*" ("AWS_*"), or "*" alone for
// the whole environment. A value starting with "()" (a shell function
// exported by bash) is not inherited, as the official SDKs do, unless
// inherit names it. Names compare without case on Windows.
func Environ(environ, inherit, extra []string) []string {
	fold := runtime.GOOS == "windows"
	norm := func(s string) string {
		if fold {
			return strings.ToUpper(s)
		}
		return s
	}
	safe := SafeEnv()
	for i := range safe {
		safe[i] = norm(safe[i])
	}
	matches := func(name string) (asked bool) {
		n := norm(name)
		for _, p := range inherit {
			p = norm(p)
			if p == "*" || p == n || (strings.HasSuffix(p, "*") && strings.HasPrefix(n, p[:len(p)-1])) {
				return true
			}
		}
		return false
	}
	var out []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		asked := matches(name)
		if asked || (slices.Contains(safe, norm(name)) && !strings.HasPrefix(value, "()")) {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

// childEnv is the environment startProcess gives a child.
func childEnv(inherit, extra []string) []string {
	return Environ(os.Environ(), inherit, extra)
}

package servername

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// FromCommand returns the name of the server the command line path args
// runs: the package or script it starts, not the interpreter that runs
// it (see the root's Command.Name). The result matches
// ^[A-Za-z0-9_-]{1,64}$.
func FromCommand(path string, args []string) string {
	prog := strings.ToLower(strings.TrimSuffix(filepath.Base(path), ".exe"))
	if interpreter(prog) {
		if n := argName(prog, args); n != "" {
			return Sanitize(n)
		}
	}
	return Sanitize(stripExt(filepath.Base(path)))
}

// interpreterRE matches programs that run the server named in their
// arguments.
var interpreterRE = regexp.MustCompile(`^(node|nodejs|bun|bunx|deno|npx|pnpx|pnpm|yarn|npm|tsx|ts-node|uv|uvx|pipx|python|python[23](\.\d+)?|py|pypy3?|ruby|php|java|dotnet|go|docker|podman|sh|bash|zsh|env|cmd)$`)

func interpreter(prog string) bool { return interpreterRE.MatchString(prog) }

// argName finds the package, module or script among an interpreter's
// arguments.
func argName(prog string, args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-m" && i+1 < len(args) && strings.HasPrefix(prog, "py"):
			return args[i+1]
		case a == "-c" || a == "-e" || a == "--eval":
			return "" // inline code: nothing names the server
		case strings.HasPrefix(a, "-"):
			if (a == "--from" || a == "--package" || a == "-p" || a == "--with") && i+1 < len(args) && (prog == "uvx" || prog == "uv" || prog == "npx" || prog == "pipx") {
				return packageName(args[i+1])
			}
			continue
		case i == 0 && (a == "run" || a == "exec" || a == "dlx" || a == "x" || a == "tool" || a == "start"):
			continue
		case (a == "run" || a == "tool") && (prog == "uv" || prog == "pipx"):
			continue
		}
		if looksLikeFile(a) {
			return scriptName(a)
		}
		if prog == "sh" || prog == "bash" || prog == "zsh" || prog == "cmd" || prog == "env" {
			return filepath.Base(a)
		}
		return packageName(a)
	}
	return ""
}

// looksLikeFile reports whether an argument names a file rather than a
// package.
func looksLikeFile(a string) bool {
	if strings.ContainsRune(a, os.PathSeparator) && !strings.HasPrefix(a, "@") {
		return true
	}
	switch strings.ToLower(filepath.Ext(a)) {
	case ".js", ".mjs", ".cjs", ".ts", ".mts", ".py", ".rb", ".php", ".jar", ".dll", ".sh":
		return true
	}
	return false
}

// scriptName names a script: the package.json it belongs to, for
// JavaScript, else the file's name.
func scriptName(path string) string {
	if n := packageJSONName(path); n != "" {
		return n
	}
	name := stripExt(filepath.Base(path))
	if name == "index" || name == "main" || name == "server" || name == "cli" {
		// index.js says nothing: its directory does (dist/ and
		// build/ say nothing either).
		dir := filepath.Dir(path)
		for range 3 {
			b := filepath.Base(dir)
			if b != "dist" && b != "build" && b != "lib" && b != "src" && b != "bin" && b != "." && b != string(os.PathSeparator) {
				return b
			}
			dir = filepath.Dir(dir)
		}
	}
	return name
}

// packageJSONName returns the "name" of the nearest package.json above a
// JavaScript file, within 6 levels; "" when there is none.
func packageJSONName(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".js", ".mjs", ".cjs", ".ts", ".mts":
	default:
		return ""
	}
	dir := filepath.Dir(path)
	for range 6 {
		b, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err == nil {
			var meta struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(b, &meta) == nil && meta.Name != "" {
				return packageName(meta.Name)
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir || filepath.Base(dir) == "node_modules" {
			break
		}
		dir = parent
	}
	return ""
}

// packageName turns a package spec into a name: "@scope/pkg@1.2" → "pkg",
// "pkg==1.0" → "pkg", "git+https://…/repo.git" → "repo".
func packageName(spec string) string {
	s := spec
	if i := strings.LastIndexAny(s, "/:"); i >= 0 && !strings.HasPrefix(s, "@") {
		s = s[i+1:]
	}
	if strings.HasPrefix(s, "@") {
		if _, after, ok := strings.Cut(s, "/"); ok {
			s = after
		}
	}
	if i := strings.IndexAny(s, "@=<>~[ "); i > 0 {
		s = s[:i]
	}
	return strings.TrimSuffix(s, ".git")
}

func stripExt(name string) string {
	if ext := filepath.Ext(name); ext != "" && len(ext) < len(name) {
		return strings.TrimSuffix(name, ext)
	}
	return name
}

// Sanitize makes s a server name: bytes outside [A-Za-z0-9_-]
// become '_', at most 64 bytes; "server" when nothing is left.
func Sanitize(s string) string {
	b := []byte(strings.Trim(s, " ."))
	for i, c := range b {
		if !nameByte(c) {
			b[i] = '_'
		}
	}
	out := strings.Trim(string(b), "_")
	if len(out) > 64 {
		out = out[:64]
	}
	if out == "" {
		return "server"
	}
	return out
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

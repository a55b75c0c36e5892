package mcpadapter

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// testEnv is the environment of the tests that use ParseConfigEnv.
var testEnv = map[string]string{
	"TOKEN": "t0k3n",
	"HOST":  "example.com",
	"EMPTY": "",
	"BIN":   "/usr/local/bin/server",
}

func lookupTestEnv(name string) (string, bool) {
	v, ok := testEnv[name]
	return v, ok
}

// configErrors returns the *ConfigErrors err is or joins, failing the test
// if it is or joins anything else.
func configErrors(t *testing.T, err error) []*ConfigError {
	t.Helper()
	var out []*ConfigError
	var walk func(error)
	walk = func(err error) {
		if ce, ok := err.(*ConfigError); ok {
			out = append(out, ce)
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		t.Fatalf("error %v (%T) is not a *ConfigError", err, err)
	}
	walk(err)
	return out
}

func TestParseConfigBriefExample(t *testing.T) {
	doc := `{"mcpServers":{"weather":{"url":"https://weather.example.com/mcp"},"calendar":{"url":"https://calendar.example.com/mcp","headers":{"Authorization":"Bearer ..."}}}}`
	cfg, err := ParseConfigEnv([]byte(doc), lookupTestEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{Servers: []*ServerConfig{
		{Name: "weather", URL: "https://weather.example.com/mcp", Transport: "http"},
		{Name: "calendar", URL: "https://calendar.example.com/mcp", Transport: "http", Headers: map[string]string{"Authorization": "Bearer ..."}},
	}}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("got\n%s\nwant\n%s", dump(cfg), dump(want))
	}
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// unsetenv unsets name for the duration of the test.
func unsetenv(t *testing.T, name string) {
	t.Setenv(name, "") // restores the old value at the end of the test
	os.Unsetenv(name)
}

func TestLoadConfigRealWorld(t *testing.T) {
	t.Setenv("SEARCH_API_KEY", "sk-search")
	t.Setenv("API_KEY", "sk-api")
	t.Setenv("API_BASE_URL", "") // empty: the default applies
	t.Setenv("HOME", "/home/me")
	unsetenv(t, "BRAVE_API_KEY") // only in a disabled server, so never looked up

	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	tests := []struct {
		file string
		want []*ServerConfig
	}{
		{"claude_desktop_config.json", []*ServerConfig{
			{Name: "filesystem", Transport: "stdio", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/username/Desktop", "/Users/username/Downloads"}},
			{Name: "github", Transport: "stdio", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-github"}, Env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "<YOUR_TOKEN>"}},
			{Name: "sqlite", Transport: "stdio", Command: "uvx", Args: []string{"mcp-server-sqlite", "--db-path", "/Users/username/test.db"}},
		}},
		{"cursor_mcp.json", []*ServerConfig{
			{Name: "web-search", Transport: "stdio", Command: "npx", Args: []string{"-y", "mcp-server"}, Env: map[string]string{"API_KEY": "sk-search"}},
			{Name: "python-tool", Transport: "stdio", Command: "python", Args: []string{"mcp-server.py"}, Env: map[string]string{"API_KEY": "value"}},
			{Name: "server-name", Transport: "http", URL: "http://localhost:3000/mcp", Headers: map[string]string{"API_KEY": "value"}},
			{Name: "legacy-sse", Transport: "sse", URL: "https://mcp.example.com/sse/"},
		}},
		{"claude_code.mcp.json", []*ServerConfig{
			{Name: "api-server", Transport: "http", URL: "https://api.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer sk-api"}},
			{Name: "local-tool", Transport: "stdio", Command: "/path/to/server"},
			{Name: "asana", Transport: "sse", URL: "https://mcp.asana.com/sse"},
		}},
		{"vscode_mcp.json", []*ServerConfig{
			{Name: "github", Transport: "http", URL: "https://api.githubcopilot.com/mcp/"},
			{Name: "fetch", Transport: "stdio", Command: "uvx", Args: []string{"mcp-server-fetch"}},
			{Name: "memory", Transport: "stdio", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"},
				Env: map[string]string{"MEMORY_FILE_PATH": "/home/me/.memory.json"}, Extra: map[string]json.RawMessage{"envFile": raw(`"${workspaceFolder}/.env"`)}},
		}},
		{"fastmcp.json", []*ServerConfig{
			{Name: "weather", Transport: "sse", URL: "https://weather.example.com/events", Timeout: 30 * time.Second},
			{Name: "assistant", Transport: "stdio", Command: "python", Args: []string{"./assistant_server.py", "--verbose"},
				Env: map[string]string{"LOG_LEVEL": "DEBUG"}, Cwd: "/srv/assistant", Timeout: 2500 * time.Millisecond},
			{Name: "search", Transport: "http", URL: "https://search.example.com/mcp", Auth: "oauth", Timeout: 90 * time.Second, IncludeTools: []string{"search", "fetch_page"}},
		}},
		{"cline_mcp_settings.json", []*ServerConfig{
			{Name: "github", Transport: "stdio", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-github"},
				Env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_example"}, ExcludeTools: []string{"delete_repository"},
				Extra: map[string]json.RawMessage{"autoApprove": raw(`["list_issues"]`)}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			cfg, err := LoadConfig("testdata/config/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.Servers, tt.want) {
				t.Fatalf("got\n%s\nwant\n%s", dump(cfg.Servers), dump(tt.want))
			}
		})
	}
}

func TestLoadConfigErrorsNameTheFile(t *testing.T) {
	unsetenv(t, "CAL_TOKEN_FOR_MCPADAPTER_TEST")
	_, err := LoadConfig("testdata/config/broken.json")
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		`testdata/config/broken.json:4:14: mcpServers.weather.url: not an http(s) URL: "ftp://x"`,
		`testdata/config/broken.json:8:36: mcpServers.calendar.headers.Authorization: environment variable CAL_TOKEN_FOR_MCPADAPTER_TEST is not set`,
	}
	errs := configErrors(t, err)
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err.Error() != strings.Join(want, "\n") {
		t.Errorf("Error() = %q", err)
	}
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.File != "testdata/config/broken.json" || ce.Line != 4 || ce.Column != 14 || ce.Path != "mcpServers.weather.url" {
		t.Errorf("errors.As found %+v", ce)
	}
}

func TestLoadConfigMissingFile(t *testing.T) {
	_, err := LoadConfig("testdata/config/no-such-file.json")
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "no-such-file.json") {
		t.Fatalf("err = %v, want a not-exist error naming the file", err)
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string // each error's text, in order
	}{
		{"type and transport disagree",
			`{"mcpServers":{"w":{"url":"https://x.example/mcp","type":"http","transport":"sse"}}}`,
			[]string{`line 1, column 77: mcpServers.w.transport: transport "sse" disagrees with type "http"`}},
		{"type and transport agree in other spellings",
			`{"mcpServers":{"w":{"url":"https://x.example/mcp","type":"http","transport":"streamable-http","auth":5}}}`,
			[]string{`line 1, column 102: mcpServers.w.auth: want "oauth", a bearer token or an OAuth object, not a number`}},
		{"auth object problems",
			`{"mcpServers":{"w":{"url":"https://x.example/mcp","auth":{"type":"saml","clientSecret":"s","scopes":"a b","redirect":"x"}}}}`,
			[]string{
				`line 1, column 66: mcpServers.w.auth.type: unknown auth type "saml"; want "oauth"`,
				`line 1, column 101: mcpServers.w.auth.scopes: want an array of strings, not a string`,
				`line 1, column 107: mcpServers.w.auth.redirect: unknown auth member "redirect"; want type, clientId, clientSecret, issuer, scopes or redirectUrl`,
				`line 1, column 58: mcpServers.w.auth: "clientSecret" and "issuer" need "clientId"`,
			}},
		{"auth object with a redirect the client cannot serve",
			`{"mcpServers":{"w":{"url":"https://x.example/mcp","auth":{"type":"oauth","redirectUrl":"https://x.example/cb"}}}}`,
			[]string{`line 1, column 88: mcpServers.w.auth.redirectUrl: OAuth.RedirectURL "https://x.example/cb": want a loopback http URL with a port, such as http://127.0.0.1:8976/callback (for other redirects use ClientOptions.OAuthHandler)`}},
		{"auth object without type",
			`{"mcpServers":{"w":{"url":"https://x.example/mcp","auth":{"clientId":"c"}}}}`,
			[]string{`line 1, column 58: mcpServers.w.auth: an auth object needs "type": "oauth"`}},
		{"missing variable",
			`{"mcpServers":{"calendar":{"url":"https://c.example/mcp","headers":{"Authorization":"Bearer ${CAL_TOKEN}"}}}}`,
			[]string{`line 1, column 85: mcpServers.calendar.headers.Authorization: environment variable CAL_TOKEN is not set`}},
		{"bad URL scheme",
			`{"mcpServers":{"weather":{"url":"ftp://x"}}}`,
			[]string{`line 1, column 33: mcpServers.weather.url: not an http(s) URL: "ftp://x"`}},
		{"URL without host",
			`{"mcpServers":{"weather":{"url":"https:///mcp"}}}`,
			[]string{`line 1, column 33: mcpServers.weather.url: not an http(s) URL: "https:///mcp"`}},
		{"relative URL",
			`{"mcpServers":{"weather":{"url":"/mcp"}}}`,
			[]string{`line 1, column 33: mcpServers.weather.url: not an http(s) URL: "/mcp"`}},
		{"unknown type",
			`{"mcpServers":{"w":{"command":"x","type":"websocket"}}}`,
			[]string{`line 1, column 42: mcpServers.w.type: unknown transport "websocket"; want "stdio", "http" (or "streamable-http") or "sse"`}},
		{"type not a string",
			`{"mcpServers":{"w":{"command":"x","type":1}}}`,
			[]string{`line 1, column 42: mcpServers.w.type: want a string, not a number`}},
		{"duplicate server name",
			"{\"mcpServers\": {\n  \"w\": {\"command\": \"a\"},\n  \"w\": {\"command\": \"b\"}\n}}",
			[]string{`line 3, column 3: mcpServers.w: duplicate server name "w"`}},
		{"duplicate member",
			`{"mcpServers":{"w":{"command":"a","command":"b"}}}`,
			[]string{`line 1, column 35: mcpServers.w.command: duplicate member "command"`}},
		{"duplicate root",
			`{"mcpServers":{"a":{"command":"x"}},"mcpServers":{"b":{"command":"y"}}}`,
			[]string{`line 1, column 37: mcpServers: duplicate member "mcpServers"`}},
		{"empty server map",
			`{"mcpServers":{}}`,
			[]string{`line 1, column 15: mcpServers: no servers`}},
		{"empty VS Code server map",
			`{"servers":{}}`,
			[]string{`line 1, column 12: servers: no servers`}},
		{"all disabled",
			`{"mcpServers":{"a":{"command":"x","disabled":true}}}`,
			[]string{`line 1, column 15: mcpServers: no servers: all 1 are disabled`}},
		{"no root",
			`{"tools":{}}`,
			[]string{`line 1, column 1: no "mcpServers" member (or "servers", as VS Code writes it)`}},
		{"both roots",
			`{"mcpServers":{"a":{"command":"x"}},"servers":{"b":{"command":"y"}}}`,
			[]string{`line 1, column 37: both "mcpServers" and "servers" are present; use one`}},
		{"not an object",
			` ["mcpServers"]`,
			[]string{`line 1, column 2: want a JSON object with an "mcpServers" member, not an array`}},
		{"servers not an object",
			`{"mcpServers":[{"command":"x"}]}`,
			[]string{`line 1, column 15: mcpServers: want an object of servers by name, not an array`}},
		{"server not an object",
			`{"mcpServers":{"a":"npx x"}}`,
			[]string{`line 1, column 20: mcpServers.a: want an object describing the server, not a string`}},
		{"syntax error",
			"{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}",
			[]string{`line 3, column 26: invalid JSON: invalid character '}' looking for beginning of object key string`}},
		{"missing comma",
			"{\"mcpServers\": {\n\t\"a\": {\"command\": \"x\"}\n\t\"b\": {\"command\": \"y\"}}}",
			[]string{`line 3, column 2: invalid JSON: invalid character '"' after object key:value pair`}},
		{"truncated",
			"{\"mcpServers\": {\n  \"a\": {\"command\": \"x\"",
			[]string{`line 2, column 23: invalid JSON: unexpected end of JSON input`}},
		{"empty document",
			``,
			[]string{`line 1, column 1: invalid JSON: unexpected end of JSON input`}},
		{"comment",
			"{\n  // servers\n  \"mcpServers\": {}}",
			[]string{`line 2, column 3: invalid JSON: invalid character '/' looking for beginning of object key string (comments are not allowed in JSON)`}},
		{"bad name characters",
			`{"mcpServers":{"my.server":{"command":"x"}}}`,
			[]string{`line 1, column 16: mcpServers["my.server"]: server name "my.server" is not allowed: names prefix tool names (weather_get_forecast), so they must match ^[A-Za-z0-9_-]+$ and be at most 64 bytes`}},
		{"empty name",
			`{"mcpServers":{"":{"command":"x"}}}`,
			[]string{`line 1, column 16: mcpServers[""]: server name "" is not allowed: names prefix tool names (weather_get_forecast), so they must match ^[A-Za-z0-9_-]+$ and be at most 64 bytes`}},
		{"long name",
			`{"mcpServers":{"` + strings.Repeat("a", 65) + `":{"command":"x"}}}`,
			[]string{`line 1, column 16: mcpServers.` + strings.Repeat("a", 65) + `: server name "` + strings.Repeat("a", 65) + `" is not allowed: names prefix tool names (weather_get_forecast), so they must match ^[A-Za-z0-9_-]+$ and be at most 64 bytes`}},
		{"command and url",
			`{"mcpServers":{"a":{"command":"x","url":"https://a.example/mcp"}}}`,
			[]string{`line 1, column 16: mcpServers.a: has both "command" and "url": a server is either a local command (stdio) or a URL (http, sse)`}},
		{"neither command nor url",
			`{"mcpServers":{"a":{"args":["x"]}}}`,
			[]string{`line 1, column 16: mcpServers.a: has neither "command" (a local server, over stdio) nor "url" (a remote one, over http or sse)`}},
		{"stdio with url",
			`{"mcpServers":{"a":{"type":"stdio","url":"https://a.example/mcp"}}}`,
			[]string{`line 1, column 16: mcpServers.a: transport "stdio" needs "command", not "url"`}},
		{"http without url",
			`{"mcpServers":{"a":{"type":"http","command":"x"}}}`,
			[]string{`line 1, column 16: mcpServers.a: transport "http" needs "url", not "command"`}},
		{"sse without url",
			`{"mcpServers":{"a":{"transport":"sse","command":"x"}}}`,
			[]string{`line 1, column 16: mcpServers.a: transport "sse" needs "url", not "command"`}},
		{"headers on stdio",
			`{"mcpServers":{"a":{"command":"x","headers":{"X":"y"}}}}`,
			[]string{`line 1, column 45: mcpServers.a.headers: "headers" applies to http and sse servers only, and this server is stdio`}},
		{"env on http",
			`{"mcpServers":{"a":{"url":"https://a.example/mcp","env":{"X":"y"}}}}`,
			[]string{`line 1, column 57: mcpServers.a.env: "env" applies to stdio servers only, and this server is http`}},
		{"empty command",
			`{"mcpServers":{"a":{"command":""}}}`,
			[]string{`line 1, column 31: mcpServers.a.command: empty command`}},
		{"negative timeout",
			`{"mcpServers":{"a":{"command":"x","timeout":-5}}}`,
			[]string{`line 1, column 45: mcpServers.a.timeout: negative timeout -5; use 0, or leave it out, for no limit`}},
		{"negative duration",
			`{"mcpServers":{"a":{"command":"x","timeout":"-1s"}}}`,
			[]string{`line 1, column 45: mcpServers.a.timeout: negative timeout "-1s"; use 0, or leave it out, for no limit`}},
		{"duration without unit",
			`{"mcpServers":{"a":{"command":"x","timeout":"30"}}}`,
			[]string{`line 1, column 45: mcpServers.a.timeout: want a number of seconds or a duration such as "30s": time: missing unit in duration "30"`}},
		{"timeout not a number",
			`{"mcpServers":{"a":{"command":"x","timeout":true}}}`,
			[]string{`line 1, column 45: mcpServers.a.timeout: want a number of seconds or a duration such as "30s", not a boolean`}},
		{"huge timeout",
			`{"mcpServers":{"a":{"command":"x","timeout":1e300}}}`,
			[]string{`line 1, column 45: mcpServers.a.timeout: 1e300 seconds is too long a timeout`}},
		{"args not an array",
			`{"mcpServers":{"weather":{"command":"x","args":"--port 1"}}}`,
			[]string{`line 1, column 48: mcpServers.weather.args: want an array of strings, not a string`}},
		{"args element not a string",
			`{"mcpServers":{"weather":{"command":"x","args":["--port", 8080]}}}`,
			[]string{`line 1, column 59: mcpServers.weather.args[1]: want a string, not a number`}},
		{"env value not a string",
			`{"mcpServers":{"a":{"command":"x","env":{"PORT":8080}}}}`,
			[]string{`line 1, column 49: mcpServers.a.env.PORT: want a string, not a number`}},
		{"headers not an object",
			`{"mcpServers":{"a":{"url":"https://a.example/mcp","headers":["X: y"]}}}`,
			[]string{`line 1, column 61: mcpServers.a.headers: want an object of strings, not an array`}},
		{"includeTools element",
			`{"mcpServers":{"a":{"command":"x","includeTools":[null]}}}`,
			[]string{`line 1, column 51: mcpServers.a.includeTools[0]: want a string, not null`}},
		{"disabled not a boolean",
			`{"mcpServers":{"a":{"command":"x","disabled":"yes"}}}`,
			[]string{`line 1, column 46: mcpServers.a.disabled: want true or false, not a string`}},
		{"unclosed variable",
			`{"mcpServers":{"a":{"command":"x","args":["${TOKEN"]}}}`,
			[]string{`line 1, column 43: mcpServers.a.args[0]: unclosed ${ in "${TOKEN"`}},
		{"VS Code input",
			`{"servers":{"a":{"type":"http","url":"https://a.example/mcp","headers":{"Authorization":"Bearer ${input:api-key}"}}}}`,
			[]string{`line 1, column 89: servers.a.headers.Authorization: ${input:api-key} is a VS Code input, which only VS Code can prompt for; use an environment variable, as ${NAME}`}},
		{"invalid variable name",
			`{"mcpServers":{"a":{"command":"${workspace Folder}"}}}`,
			[]string{`line 1, column 31: mcpServers.a.command: invalid variable name "workspace Folder" in ${workspace Folder}; want ${NAME} or ${NAME:-default}, with NAME made of letters, digits and '_'`}},
		{"all errors, in document order",
			"{\"mcpServers\": {\n" +
				"  \"a\": {\"command\": \"${NOPE}\", \"args\": [\"${NOPE2}-${NOPE3}\"]},\n" +
				"  \"b\": {\"url\": \"gopher://x\"},\n" +
				"  \"c d\": {\"command\": \"x\"},\n" +
				"  \"e\": {\"command\": \"x\", \"timeout\": -1}\n" +
				"}}",
			[]string{
				`line 2, column 20: mcpServers.a.command: environment variable NOPE is not set`,
				`line 2, column 40: mcpServers.a.args[0]: environment variable NOPE2 is not set`,
				`line 2, column 40: mcpServers.a.args[0]: environment variable NOPE3 is not set`,
				`line 3, column 16: mcpServers.b.url: not an http(s) URL: "gopher://x"`,
				`line 4, column 3: mcpServers["c d"]: server name "c d" is not allowed: names prefix tool names (weather_get_forecast), so they must match ^[A-Za-z0-9_-]+$ and be at most 64 bytes`,
				`line 5, column 36: mcpServers.e.timeout: negative timeout -1; use 0, or leave it out, for no limit`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfigEnv([]byte(tt.doc), lookupTestEnv)
			if err == nil {
				t.Fatalf("no error; parsed %s", dump(cfg))
			}
			if cfg != nil {
				t.Errorf("a Config came back with the error")
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("errors.As(%v, *ConfigError) failed", err)
			}
			var got []string
			for _, e := range configErrors(t, err) {
				if e.File != "" {
					t.Errorf("File = %q, want none", e.File)
				}
				got = append(got, e.Error())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestParseConfigOAuthObject(t *testing.T) {
	doc := `{"mcpServers":{"w":{"url":"https://x.example/mcp","auth":{"type":"OAuth","clientId":"app","clientSecret":"${TOKEN}","issuer":"https://as.example","scopes":["a","b"],"redirectUrl":"http://127.0.0.1:8976/cb"}}}}`
	cfg, err := ParseConfigEnv([]byte(doc), lookupTestEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := &ServerConfig{Name: "w", URL: "https://x.example/mcp", Transport: "http", Auth: "oauth",
		OAuth: &OAuthSettings{ClientID: "app", ClientSecret: "t0k3n", Issuer: "https://as.example", Scopes: []string{"a", "b"}, RedirectURL: "http://127.0.0.1:8976/cb"}}
	if !reflect.DeepEqual(cfg.Servers[0], want) {
		t.Errorf("got %s\nwant %s", dump(cfg.Servers[0]), dump(want))
	}
}

func TestConfigErrorFormat(t *testing.T) {
	tests := []struct {
		err  ConfigError
		want string
	}{
		{ConfigError{File: "mcp.json", Path: "mcpServers.weather.url", Line: 7, Column: 12, Msg: `not an http(s) URL: "ftp://x"`},
			`mcp.json:7:12: mcpServers.weather.url: not an http(s) URL: "ftp://x"`},
		{ConfigError{File: "mcp.json", Path: "mcpServers", Msg: "no servers"}, `mcp.json: mcpServers: no servers`},
		{ConfigError{Line: 1, Column: 2, Msg: "invalid JSON: x"}, `line 1, column 2: invalid JSON: x`},
		{ConfigError{Msg: "m"}, `m`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestParseConfigTransports(t *testing.T) {
	tests := []struct {
		server string
		want   string
	}{
		{`{"command":"x"}`, "stdio"},
		{`{"command":"x","type":"stdio"}`, "stdio"},
		{`{"url":"https://a.example/mcp"}`, "http"},
		{`{"url":"https://a.example/sse"}`, "sse"},
		{`{"url":"https://a.example/sse/"}`, "sse"},
		{`{"url":"https://a.example/v1/sse?key=1"}`, "sse"},
		{`{"url":"https://a.example/sse/mcp"}`, "http"},
		{`{"url":"https://a.example/ssefoo"}`, "http"},
		{`{"url":"https://a.example/sse","type":"http"}`, "http"},
		{`{"url":"https://a.example/mcp","type":"sse"}`, "sse"},
		{`{"url":"https://a.example/mcp","type":"streamable-http"}`, "http"},
		{`{"url":"https://a.example/mcp","type":"streamableHttp"}`, "http"},
		{`{"url":"https://a.example/mcp","transport":"streamable_http"}`, "http"},
		{`{"url":"https://a.example/mcp","transport":"SSE"}`, "sse"},
		{`{"url":"https://a.example/mcp","type":"http","transport":"streamableHttp"}`, "http"},
		{`{"url":"HTTP://A.EXAMPLE/SSE"}`, "http"}, // paths are case-sensitive
	}
	for _, tt := range tests {
		cfg, err := ParseConfigEnv([]byte(`{"mcpServers":{"s":`+tt.server+`}}`), lookupTestEnv)
		if err != nil {
			t.Errorf("%s: %v", tt.server, err)
			continue
		}
		if got := cfg.Servers[0].Transport; got != tt.want {
			t.Errorf("%s: Transport = %q, want %q", tt.server, got, tt.want)
		}
	}
}

func TestParseConfigTimeouts(t *testing.T) {
	tests := []struct {
		timeout string
		want    time.Duration
	}{
		{`30`, 30 * time.Second},
		{`2.5`, 2500 * time.Millisecond},
		{`0.001`, time.Millisecond},
		{`0`, 0},
		{`-0`, 0},
		{`1e3`, 1000 * time.Second},
		{`"30s"`, 30 * time.Second},
		{`"1m"`, time.Minute},
		{`"1h2m3.5s"`, time.Hour + 2*time.Minute + 3500*time.Millisecond},
		{`"0"`, 0},
		{`null`, 0},
	}
	for _, tt := range tests {
		cfg, err := ParseConfigEnv([]byte(`{"mcpServers":{"s":{"command":"x","timeout":`+tt.timeout+`}}}`), lookupTestEnv)
		if err != nil {
			t.Errorf("%s: %v", tt.timeout, err)
			continue
		}
		if got := cfg.Servers[0].Timeout; got != tt.want {
			t.Errorf("timeout %s = %v, want %v", tt.timeout, got, tt.want)
		}
	}
}

func TestParseConfigOrder(t *testing.T) {
	names := []string{"zeta", "alpha", "mike", "Bravo", "_x", "9", "a-b", "a_b", "yankee", "echo", "delta", "charlie"}
	var b strings.Builder
	b.WriteString(`{"mcpServers":{`)
	for i, n := range names {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"` + n + `":{"command":"x"}`)
	}
	b.WriteString("}}")
	cfg, err := ParseConfigEnv([]byte(b.String()), lookupTestEnv)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range cfg.Servers {
		got = append(got, s.Name)
	}
	if !reflect.DeepEqual(got, names) {
		t.Fatalf("order %v, want %v", got, names)
	}
}

func TestParseConfigMembers(t *testing.T) {
	doc := "\ufeff" + `{"mcpServers":{
		"off": {"command": "${UNSET_IN_DISABLED}", "disabled": true},
		"on": {
			"command": "${BIN}", "args": ["--token=${TOKEN}", "$HOME", "a$$b", "${EMPTY}"], "cwd": "${HOME_DIR:-/tmp}",
			"env": {"A": "${TOKEN}", "B": "${EMPTY:-fallback}"}, "url": null, "disabled": false,
			"excludeTools": ["rm"], "includeTools": [],
			"autoApprove": ["read"], "description": {"text": "x", "n": 1.50}, "alwaysAllow": null
		},
		"remote": {"url": "https://${HOST}/mcp", "auth": "Bearer-less ${TOKEN}", "headers": {"X-Env": "${EMPTY}"}, "command": null},
		"oauth": {"url": "https://example.com/mcp", "auth": "OAuth"}
	}}`
	cfg, err := ParseConfigEnv([]byte(doc), lookupTestEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := []*ServerConfig{
		{Name: "on", Transport: "stdio", Command: "/usr/local/bin/server", Args: []string{"--token=t0k3n", "$HOME", "a$$b", ""}, Cwd: "/tmp",
			Env: map[string]string{"A": "t0k3n", "B": "fallback"}, ExcludeTools: []string{"rm"},
			Extra: map[string]json.RawMessage{"autoApprove": json.RawMessage(`["read"]`), "description": json.RawMessage(`{"text": "x", "n": 1.50}`), "alwaysAllow": json.RawMessage(`null`)}},
		{Name: "remote", Transport: "http", URL: "https://example.com/mcp", Auth: "Bearer-less t0k3n", Headers: map[string]string{"X-Env": ""}},
		{Name: "oauth", Transport: "http", URL: "https://example.com/mcp", Auth: "oauth"},
	}
	if !reflect.DeepEqual(cfg.Servers, want) {
		t.Fatalf("got\n%s\nwant\n%s", dump(cfg.Servers), dump(want))
	}
}

func TestConfigExpandVars(t *testing.T) {
	env := map[string]string{"A": "1", "B": "two", "EMPTY": "", "PATH_X": "/x"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		in, want string
		problems []string
	}{
		{"plain", "plain", nil},
		{"", "", nil},
		{"${A}", "1", nil},
		{"${env:A}", "1", nil},
		{"${A}${B}", "1two", nil},
		{"pre-${A}-mid-${B}-post", "pre-1-mid-two-post", nil},
		{"${UNSET:-def}", "def", nil},
		{"${EMPTY:-def}", "def", nil},
		{"${A:-def}", "1", nil},
		{"${UNSET:-}", "", nil},
		{"${EMPTY}", "", nil},
		{"${UNSET:-a b/c:d}", "a b/c:d", nil},
		{"${UNSET:-${A}", "${A", nil}, // defaults are not expanded and end at the first }
		{"$A $ $$ $$$ a$", "$A $ $$ $$$ a$", nil},
		{"$${A}", "$1", nil},
		{"{A}}", "{A}}", nil},
		{"${PATH_X}/bin:${UNSET:-/usr/bin}", "/x/bin:/usr/bin", nil},
		{"${UNSET}", "", []string{"environment variable UNSET is not set"}},
		{"${U1}:${A}:${U2}", ":1:", []string{"environment variable U1 is not set", "environment variable U2 is not set"}},
		{"${A", "", []string{`unclosed ${ in "${A"`}},
		{"x${A}y${B", "x1y", []string{`unclosed ${ in "${B"`}},
		{"${}", "", []string{`invalid variable name "" in ${}; want ${NAME} or ${NAME:-default}, with NAME made of letters, digits and '_'`}},
		{"${1A}", "", []string{`invalid variable name "1A" in ${1A}; want ${NAME} or ${NAME:-default}, with NAME made of letters, digits and '_'`}},
		{"${A-def}", "", []string{`invalid variable name "A-def" in ${A-def}; want ${NAME} or ${NAME:-default}, with NAME made of letters, digits and '_'`}},
	}
	for _, tt := range tests {
		got, problems := expandVars(tt.in, lookup)
		if got != tt.want || !reflect.DeepEqual(problems, tt.problems) {
			t.Errorf("expandVars(%q) = %q, %q; want %q, %q", tt.in, got, problems, tt.want, tt.problems)
		}
	}
}

func TestParseConfigUsesEnvironment(t *testing.T) {
	t.Setenv("MCPADAPTER_TEST_URL", "https://env.example.com/mcp")
	cfg, err := ParseConfig([]byte(`{"servers":{"e":{"url":"${MCPADAPTER_TEST_URL}"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Servers[0].URL; got != "https://env.example.com/mcp" {
		t.Fatalf("URL = %q", got)
	}
}

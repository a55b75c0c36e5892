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

	"github.com/mcpadapter/mcpadapter/internal/config"
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
	t.Parallel()
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
			{Name: "search", Transport: "http", URL: "https://search.example.com/mcp", Auth: &ServerAuth{OAuth: &OAuthSettings{}}, Timeout: 90 * time.Second, IncludeTools: []string{"search", "fetch_page"}},
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
	t.Parallel()
	_, err := LoadConfig("testdata/config/no-such-file.json")
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "no-such-file.json") {
		t.Fatalf("err = %v, want a not-exist error naming the file", err)
	}
}

func TestParseConfigOAuthObject(t *testing.T) {
	t.Parallel()
	doc := `{"mcpServers":{"w":{"url":"https://x.example/mcp","auth":{"type":"OAuth","clientId":"app","clientSecret":"${TOKEN}","issuer":"https://as.example","scopes":["a","b"],"redirectUrl":"http://127.0.0.1:8976/cb"}}}}`
	cfg, err := ParseConfigEnv([]byte(doc), lookupTestEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := &ServerConfig{Name: "w", URL: "https://x.example/mcp", Transport: "http",
		Auth: &ServerAuth{OAuth: &OAuthSettings{ClientID: "app", ClientSecret: "t0k3n", Issuer: "https://as.example", Scopes: []string{"a", "b"}, RedirectURL: "http://127.0.0.1:8976/cb"}}}
	if !reflect.DeepEqual(cfg.Servers[0], want) {
		t.Errorf("got %s\nwant %s", dump(cfg.Servers[0]), dump(want))
	}
}

func TestConfigErrorFormat(t *testing.T) {
	t.Parallel()
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

func TestParseConfigRedirectURL(t *testing.T) {
	t.Parallel()
	doc := `{"mcpServers":{"w":{"url":"https://x.example/mcp","auth":{"type":"oauth","redirectUrl":"https://x.example/cb"}}}}`
	want := `line 1, column 88: mcpServers.w.auth.redirectUrl: OAuth.RedirectURL "https://x.example/cb": want a loopback http URL with a port, such as http://127.0.0.1:8976/callback (for other redirects use ClientOptions.OAuthHandler)`
	_, err := ParseConfigEnv([]byte(doc), lookupTestEnv)
	var ce *ConfigError
	if !errors.As(err, &ce) || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

// TestParseConfigConversion: every member of a full document reaches its
// ServerConfig field, and every field (nested ones too) is set by some
// server, so that a field the conversion forgets shows up here.
func TestParseConfigConversion(t *testing.T) {
	t.Parallel()
	doc := `{"mcpServers":{
		"local": {"command": "${BIN}", "args": ["-v"], "env": {"K": "v"}, "inheritEnv": ["AWS_*"], "cwd": "/srv", "timeout": 5,
			"includeTools": ["a"], "excludeTools": ["b"], "cache": {"defaultTtl": "1s", "maxTtl": "2s", "maxEntries": 3}, "x-extra": [1]},
		"token": {"url": "https://t.example/mcp", "headers": {"H": "h"}, "auth": "${TOKEN}", "cache": false},
		"oauth": {"url": "https://o.example/sse", "auth": {"type": "oauth", "clientId": "id", "clientSecret": "s", "issuer": "https://as.example",
			"scopes": ["s1"], "redirectUrl": "http://127.0.0.1:8976/cb", "dpopKeyFile": "/k/d.pem"}, "cache": true},
		"cc": {"url": "https://c.example/mcp", "auth": {"type": "client_credentials", "issuer": "https://as.example", "clientId": "c", "privateKeyFile": "/k/c.pem", "scopes": ["s2"], "dpopKeyFile": "/k/d.pem"}},
		"wif": {"url": "https://w.example/mcp", "auth": {"type": "jwt_bearer", "issuer": "https://as.example", "clientId": "w", "clientSecret": "ws", "assertionFile": "/var/run/token"}},
		"ent": {"url": "https://e.example/mcp", "auth": {"type": "enterprise", "issuer": "https://as.example", "clientId": "e", "clientSecret": "es", "idTokenCommand": ["sso", "token"],
			"idpTokenUrl": "https://idp.example/token", "idpIssuer": "https://idp.example", "idpClientId": "i", "idpClientSecret": "is"}},
		"ent2": {"url": "https://e2.example/mcp", "auth": {"type": "enterprise", "issuer": "https://as.example", "clientId": "e", "idTokenFile": "/t", "idpIssuer": "https://idp.example"}},
		"xchg": {"url": "https://x.example/mcp", "auth": {"type": "token_exchange", "issuer": "https://as.example", "clientId": "g", "clientSecret": "gs",
			"audience": "x", "resource": "https://x.example/mcp", "scopes": ["s3"]}},
		"jag": {"url": "https://j.example/mcp", "auth": {"type": "token_exchange", "grant": "id-jag", "issuer": "https://idp.example", "clientId": "g",
			"authorizationServer": "https://as.j.example", "asClientId": "ja", "asClientSecret": "js"}},
		"plain": {"url": "https://p.example/mcp", "auth": "oauth", "maxConcurrentCalls": 2, "prefix": "p", "description": "Note.", "tasks": "prefer",
			"resetTimeoutOnProgress": true, "maxTotalTimeout": "10m", "skipArgumentCheck": true,
			"tools": {"t": {"name": "n", "description": "d", "enabled": false, "timeout": 90, "maxResultBytes": 4096, "tasks": "never", "skipArgumentCheck": true, "arguments": {"a": {"name": "b", "description": "x", "default": 1, "hide": true}}}}}
	}}`
	cfg, err := ParseConfigEnv([]byte(doc), lookupTestEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := []*ServerConfig{
		{Name: "local", Command: "/usr/local/bin/server", Args: []string{"-v"}, Env: map[string]string{"K": "v"}, InheritEnv: []string{"AWS_*"}, Cwd: "/srv",
			Transport: "stdio", Timeout: 5 * time.Second, IncludeTools: []string{"a"}, ExcludeTools: []string{"b"},
			Cache: &ServerCache{DefaultTTL: time.Second, MaxTTL: 2 * time.Second, MaxEntries: 3},
			Extra: map[string]json.RawMessage{"x-extra": json.RawMessage(`[1]`)}},
		{Name: "token", URL: "https://t.example/mcp", Headers: map[string]string{"H": "h"}, Transport: "http",
			Auth: &ServerAuth{Bearer: "t0k3n"}, Cache: &ServerCache{Off: true}},
		{Name: "oauth", URL: "https://o.example/sse", Transport: "sse", Cache: &ServerCache{},
			Auth: &ServerAuth{OAuth: &OAuthSettings{ClientID: "id", ClientSecret: "s", Issuer: "https://as.example", Scopes: []string{"s1"}, RedirectURL: "http://127.0.0.1:8976/cb", DPoPKeyFile: "/k/d.pem"}}},
		{Name: "cc", URL: "https://c.example/mcp", Transport: "http",
			Auth: &ServerAuth{Grant: &GrantSettings{Type: "client_credentials", Issuer: "https://as.example", ClientID: "c", PrivateKeyFile: "/k/c.pem", Scopes: []string{"s2"}, DPoPKeyFile: "/k/d.pem"}}},
		{Name: "wif", URL: "https://w.example/mcp", Transport: "http",
			Auth: &ServerAuth{Grant: &GrantSettings{Type: "jwt_bearer", Issuer: "https://as.example", ClientID: "w", ClientSecret: "ws", AssertionFile: "/var/run/token"}}},
		{Name: "ent", URL: "https://e.example/mcp", Transport: "http",
			Auth: &ServerAuth{Grant: &GrantSettings{Type: "enterprise", Issuer: "https://as.example", ClientID: "e", ClientSecret: "es", IDTokenCommand: []string{"sso", "token"},
				IdPTokenURL: "https://idp.example/token", IdPIssuer: "https://idp.example", IdPClientID: "i", IdPClientSecret: "is"}}},
		{Name: "ent2", URL: "https://e2.example/mcp", Transport: "http",
			Auth: &ServerAuth{Grant: &GrantSettings{Type: "enterprise", Issuer: "https://as.example", ClientID: "e", IDTokenFile: "/t", IdPIssuer: "https://idp.example"}}},
		{Name: "xchg", URL: "https://x.example/mcp", Transport: "http",
			Auth: &ServerAuth{Grant: &GrantSettings{Type: "token_exchange", Issuer: "https://as.example", ClientID: "g", ClientSecret: "gs",
				Audience: "x", Resource: "https://x.example/mcp", Scopes: []string{"s3"}}}},
		{Name: "jag", URL: "https://j.example/mcp", Transport: "http",
			Auth: &ServerAuth{Grant: &GrantSettings{Type: "token_exchange", Grant: "id-jag", Issuer: "https://idp.example", ClientID: "g",
				AuthorizationServer: "https://as.j.example", ASClientID: "ja", ASClientSecret: "js"}}},
		{Name: "plain", URL: "https://p.example/mcp", Transport: "http", Auth: &ServerAuth{OAuth: &OAuthSettings{}},
			MaxConcurrentCalls: 2, Prefix: "p", Description: "Note.", ResetTimeoutOnProgress: true, MaxTotalTimeout: 10 * time.Minute, Tasks: TaskPrefer, SkipArgumentCheck: true,
			Tools: map[string]*ToolTransform{"t": {Name: "n", Description: "d", Disabled: true, Timeout: 90 * time.Second, MaxResultBytes: 4096, Task: TaskNever, SkipArgumentCheck: true,
				Arguments: map[string]*ArgTransform{"a": {Name: "b", Description: "x", Default: json.RawMessage(`1`), Hide: true}}}}},
	}
	if !reflect.DeepEqual(cfg.Servers, want) {
		t.Fatalf("got\n%s\nwant\n%s", dump(cfg.Servers), dump(want))
	}

	// Every field of these types is set somewhere in the document.
	set := make(map[string]bool)
	var walk func(prefix string, v reflect.Value)
	walk = func(prefix string, v reflect.Value) {
		for i := 0; i < v.NumField(); i++ {
			f, name := v.Field(i), prefix+v.Type().Field(i).Name
			if f.Kind() == reflect.Pointer && !f.IsNil() && f.Elem().Kind() == reflect.Struct {
				walk(name+".", f.Elem())
			}
			if !f.IsZero() {
				set[name] = true
			}
		}
	}
	for _, sc := range cfg.Servers {
		walk("", reflect.ValueOf(sc).Elem())
	}
	var unset []string
	var fields func(prefix string, t reflect.Type)
	fields = func(prefix string, t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !set[prefix+f.Name] {
				unset = append(unset, prefix+f.Name)
			}
			if f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
				fields(prefix+f.Name+".", f.Type.Elem())
			}
		}
	}
	fields("", reflect.TypeFor[ServerConfig]())
	if len(unset) > 0 {
		t.Errorf("fields no server sets: %v", unset)
	}
}

// TestParseConfigManyProblems: past 100 problems, ParseConfig lists the
// first 100 and one more *ConfigError that counts the rest.
func TestParseConfigManyProblems(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"mcpServers":{"a":{"command":"x","args":[`)
	for i := range 250 {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString("1")
	}
	b.WriteString("]}}}")
	_, err := ParseConfig([]byte(b.String()))
	errs := configErrors(t, err)
	if len(errs) != 101 {
		t.Fatalf("%d errors, want 101", len(errs))
	}
	if got, want := errs[0].Error(), "line 1, column 43: mcpServers.a.args[0]: want a string, not a number"; got != want {
		t.Errorf("first error %q, want %q", got, want)
	}
	if got, want := errs[100].Error(), "and 150 more problems, not shown"; got != want {
		t.Errorf("last error %q, want %q", got, want)
	}
}

// TestServerAuthExactlyOne: NewGroup refuses a ServerAuth with both or
// neither of Bearer and OAuth.
func TestServerAuthExactlyOne(t *testing.T) {
	t.Parallel()
	for _, a := range []*ServerAuth{{}, {Bearer: "t", OAuth: &OAuthSettings{}}} {
		cfg := &Config{Servers: []*ServerConfig{{Name: "a", URL: "https://a.example/mcp", Transport: "http", Auth: a}}}
		_, err := NewGroup(cfg, &ClientOptions{})
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Path != "mcpServers.a.auth" {
			t.Errorf("%+v: err = %v, want a ConfigError at mcpServers.a.auth", a, err)
		}
	}
}

func TestDefaultCacheEntriesAgree(t *testing.T) {
	t.Parallel()
	if config.DefaultCacheEntries != DefaultCacheEntries {
		t.Fatalf("internal/config quotes %d entries as the default; the cache keeps %d", config.DefaultCacheEntries, DefaultCacheEntries)
	}
}

func TestServerConfigCache(t *testing.T) {
	t.Parallel()
	store := NewMemoryCacheStore(1)
	base := &CacheConfig{DefaultTTL: time.Second, MaxTTL: time.Hour, Store: store}
	tests := []struct {
		name string
		sc   ServerConfig
		base *CacheConfig
		want *CacheConfig
	}{
		{"absent, no base", ServerConfig{}, nil, nil},
		{"absent keeps base", ServerConfig{}, base, base},
		{"false drops base", ServerConfig{Cache: &ServerCache{Off: true}}, base, nil},
		{"true, no base", ServerConfig{Cache: &ServerCache{}}, nil, &CacheConfig{}},
		{"true keeps base", ServerConfig{Cache: &ServerCache{}}, base, base},
		{"object over base", ServerConfig{Cache: &ServerCache{MaxTTL: time.Minute, MaxEntries: 9}}, base,
			&CacheConfig{DefaultTTL: time.Second, MaxTTL: time.Minute, MaxEntries: 9, Store: store}},
	}
	for _, tt := range tests {
		got := tt.sc.cacheConfig(tt.base)
		if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

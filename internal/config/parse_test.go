package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseErrors(t *testing.T) {
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
				`line 1, column 66: mcpServers.w.auth.type: unknown auth type "saml"; want "oauth", "client_credentials", "jwt_bearer", "enterprise", "token_exchange" or "signin"`,
				`line 1, column 101: mcpServers.w.auth.scopes: want an array of strings, not a string`,
				`line 1, column 107: mcpServers.w.auth.redirect: unknown auth member "redirect"; want type, clientId, clientSecret, issuer, scopes, redirectUrl or dpopKeyFile`,
				`line 1, column 58: mcpServers.w.auth: "clientSecret" and "issuer" need "clientId"`,
			}},
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
		{"ID-JAG exchange problems",
			`{"mcpServers":{"a":{"url":"https://a.example/mcp","auth":{"type":"token_exchange","grant":"id-jag","issuer":"https://idp.example","clientId":"g","audience":"x"}},` +
				`"b":{"url":"https://b.example/mcp","auth":{"type":"token_exchange","grant":"saml","issuer":"https://idp.example","clientId":"g"}},` +
				`"c":{"url":"https://c.example/mcp","auth":{"type":"token_exchange","issuer":"https://idp.example","clientId":"g","asClientSecret":"s"}}}}`,
			[]string{
				`line 1, column 58: mcpServers.a.auth: a "token_exchange" auth object with "grant": "id-jag" needs "authorizationServer": the MCP server's authorization server, where the ID-JAG is presented`,
				`line 1, column 58: mcpServers.a.auth: "audience" does not go with "grant": "id-jag": the ID-JAG's audience is "authorizationServer"`,
				`line 1, column 238: mcpServers.b.auth.grant: unknown grant "saml" of a "token_exchange" auth object; want "id-jag" (or no "grant")`,
				`line 1, column 335: mcpServers.c.auth: "authorizationServer", "asClientId" and "asClientSecret" go with "grant": "id-jag"`,
			}},
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
			doc, problems := Parse([]byte(tt.doc), Options{Lookup: lookupTestEnv})
			if len(problems) == 0 {
				t.Fatalf("no problem; parsed %s", dump(doc))
			}
			if doc != nil {
				t.Errorf("a Document came back with the problems")
			}
			var got []string
			for _, e := range problems {
				if e.File != "" {
					t.Errorf("File = %q, want none", e.File)
				}
				got = append(got, e.String())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestParseTransports(t *testing.T) {
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
		cfg, err := parse([]byte(`{"mcpServers":{"s":` + tt.server + `}}`))
		if err != nil {
			t.Errorf("%s: %v", tt.server, err)
			continue
		}
		if got := cfg.Servers[0].Transport; got != tt.want {
			t.Errorf("%s: Transport = %q, want %q", tt.server, got, tt.want)
		}
	}
}

func TestParseTimeouts(t *testing.T) {
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
		cfg, err := parse([]byte(`{"mcpServers":{"s":{"command":"x","timeout":` + tt.timeout + `}}}`))
		if err != nil {
			t.Errorf("%s: %v", tt.timeout, err)
			continue
		}
		if got := cfg.Servers[0].Timeout; got != tt.want {
			t.Errorf("timeout %s = %v, want %v", tt.timeout, got, tt.want)
		}
	}
}

func TestParseOrder(t *testing.T) {
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
	cfg, err := parse([]byte(b.String()))
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

func TestParseMembers(t *testing.T) {
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
	cfg, err := parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := []Server{
		{Name: "on", Transport: "stdio", Command: "/usr/local/bin/server", Args: []string{"--token=t0k3n", "$HOME", "a$$b", ""}, Cwd: "/tmp",
			Env: map[string]string{"A": "t0k3n", "B": "fallback"}, ExcludeTools: []string{"rm"},
			Extra: map[string]json.RawMessage{"autoApprove": json.RawMessage(`["read"]`), "description": json.RawMessage(`{"text": "x", "n": 1.50}`), "alwaysAllow": json.RawMessage(`null`)}},
		{Name: "remote", Transport: "http", URL: "https://example.com/mcp", Auth: &Auth{Bearer: "Bearer-less t0k3n"}, Headers: map[string]string{"X-Env": ""}},
		{Name: "oauth", Transport: "http", URL: "https://example.com/mcp", Auth: &Auth{OAuth: &OAuth{}}},
	}
	if !reflect.DeepEqual(cfg.Servers, want) {
		t.Fatalf("got\n%s\nwant\n%s", dump(cfg.Servers), dump(want))
	}
}

// TestParseQuotesValuesAsWritten: a message quotes a value as the document
// writes it, never as expanded: ${SECRET} may hold a secret.
func TestParseQuotesValuesAsWritten(t *testing.T) {
	env := map[string]string{"SECRET": "ftp://user:hunter2@x.example", "CB": "https://hunter2.example/cb", "T": "hunter2"}
	check := func(u string) error {
		if strings.HasPrefix(u, "http://127.0.0.1:") {
			return nil
		}
		return fmt.Errorf("OAuth.RedirectURL %q: want a loopback http URL with a port", u)
	}
	doc := `{"mcpServers":{
		"a":{"url":"${SECRET}"},
		"b":{"url":"https://b.example/mcp","auth":{"type":"${T}","redirectUrl":"${CB}"}}
	}}`
	_, problems := Parse([]byte(doc), Options{Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, CheckRedirectURL: check})
	want := []string{
		`line 2, column 14: mcpServers.a.url: not an http(s) URL: "${SECRET}"`,
		`line 3, column 53: mcpServers.b.auth.type: unknown auth type "${T}"; want "oauth", "client_credentials", "jwt_bearer", "enterprise", "token_exchange" or "signin"`,
		`line 3, column 74: mcpServers.b.auth.redirectUrl: OAuth.RedirectURL "${CB}": want a loopback http URL with a port`,
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestParseRedirectURLHook: CheckRedirectURL sees the expanded URL; without
// it, any redirectUrl passes.
func TestParseRedirectURLHook(t *testing.T) {
	doc := []byte(`{"mcpServers":{"w":{"url":"https://x.example/mcp","auth":{"type":"oauth","redirectUrl":"http://${HOST}:1/cb"}}}}`)
	var seen []string
	_, problems := Parse(doc, Options{Lookup: lookupTestEnv, CheckRedirectURL: func(u string) error {
		seen = append(seen, u)
		return nil
	}})
	if problems != nil || !reflect.DeepEqual(seen, []string{"http://example.com:1/cb"}) {
		t.Errorf("problems %v; the hook saw %q", problems, seen)
	}
	d, problems := Parse(doc, Options{Lookup: lookupTestEnv})
	if problems != nil || d.Servers[0].Auth.OAuth.RedirectURL != "http://example.com:1/cb" {
		t.Errorf("without a hook: %v, %s", problems, dump(d))
	}
}

// TestParseNilLookup: with no Lookup, no variable is set.
func TestParseNilLookup(t *testing.T) {
	d, problems := Parse([]byte(`{"mcpServers":{"a":{"command":"${X:-x}","args":["${Y}"]}}}`), Options{})
	want := []Problem{{Path: "mcpServers.a.args[0]", Line: 1, Column: 49, Msg: "environment variable Y is not set"}}
	if d != nil || !reflect.DeepEqual(problems, want) {
		t.Errorf("got %v, %+v", d, problems)
	}
}

// TestParseProblemCap: past MaxProblems, problems are counted, not listed
// (formatting and placing each of 80,000 problems took seconds).
func TestParseProblemCap(t *testing.T) {
	doc := func(n int) []byte {
		var b strings.Builder
		b.WriteString(`{"mcpServers":{"a":{"command":"x","args":[`)
		for i := range n {
			if i > 0 {
				b.WriteString(",\n")
			}
			b.WriteString("1")
		}
		b.WriteString("]}}}")
		return []byte(b.String())
	}
	tests := []struct {
		n    int
		last string // the last problem's message
	}{
		{MaxProblems, "want a string, not a number"},
		{MaxProblems + 1, "and 1 more problem, not shown"},
		{80000, "and 79900 more problems, not shown"},
	}
	for _, tt := range tests {
		_, problems := Parse(doc(tt.n), Options{File: "mcp.json"})
		if want := min(tt.n, MaxProblems+1); len(problems) != want {
			t.Errorf("%d problems: %d reported, want %d", tt.n, len(problems), want)
			continue
		}
		if got := problems[MaxProblems-1]; got.Line != MaxProblems || got.Path != fmt.Sprintf("mcpServers.a.args[%d]", MaxProblems-1) {
			t.Errorf("%d problems: problem %d is %+v", tt.n, MaxProblems, got)
		}
		if got := problems[len(problems)-1]; got.Msg != tt.last || got.File != "mcp.json" {
			t.Errorf("%d problems: the last is %+v, want %q", tt.n, got, tt.last)
		}
	}
}

// TestURLErrorHidesCredentials: a URL the parser refuses is quoted in its
// error without an inline password or query values.
func TestURLErrorHidesCredentials(t *testing.T) {
	const secret = "hunter22secret"
	for _, u := range []string{
		"ftp://user:" + secret + "@host/mcp",
		"ht tp://user:" + secret + "@host/",
		"user:" + secret + "@host/mcp",
		"ftp://host/mcp?key=" + secret + "&b=" + secret + "#frag",
		"ftp://user:p@ss:" + secret + "@host/",
	} {
		_, problems := Parse([]byte(`{"mcpServers": {"a": {"url": "`+u+`"}}}`), Options{})
		if len(problems) == 0 {
			t.Errorf("%s: no problem", u)
			continue
		}
		if msg := fmt.Sprint(problems); strings.Contains(msg, secret) || !strings.Contains(msg, "[REDACTED]") {
			t.Errorf("%s: %s", u, msg)
		}
	}
}

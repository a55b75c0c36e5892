package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var serverNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// FuzzParse parses any document: no panic, a document or problems (never
// both) with sane positions, and servers that hold what Parse promises.
func FuzzParse(f *testing.F) {
	// The real-world documents of the mcpadapter package's tests.
	files, err := filepath.Glob("../../testdata/config/*.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		`{"mcpServers":{"weather":{"url":"https://weather.example.com/mcp"},"calendar":{"url":"https://calendar.example.com/mcp","headers":{"Authorization":"Bearer ..."}}}}`,
		`{"servers":{"a":{"type":"stdio","command":"${SET}","args":["${UNSET:-x}","${EMPTY}"],"env":{"K":"$V"}}}}`,
		`{"mcpServers":{"a":{"url":"http://h/sse/","transport":"sse","timeout":1.5,"auth":"oauth"}}}`,
		`{"mcpServers":{"a":{"command":"x","url":"http://h"},"a":{}}}`,
		`{"mcpServers":{"a":{"url":"http://h","resetTimeoutOnProgress":true,"maxTotalTimeout":"10m","tools":{"t":{"timeout":-2,"maxResultBytes":1e3}}}}}`,
		`{"mcpServers":{"a b":{"type":"http","transport":"stdio","timeout":-1,"disabled":true}}}`,
		`{"mcpServers":{"a":{"command":"x","disabled":1,"includeTools":[1],"excludeTools":"x"}}}`,
		`{"mcpServers":{}, "servers":{}}`,
		`{"mcpServers":{"a":{"url":"http://h","skipArgumentCheck":true,"tools":{"t":{"skipArgumentCheck":1},"u":{"skipArgumentCheck":false}}},"b":{"command":"x","skipArgumentCheck":"yes"}}}`,
		`{"mcpServers":{"a":{"url":"http://h","cache":{"defaultTtl":"30s","maxTtl":60,"maxEntries":5}},"b":{"command":"x","cache":false},"c":{"command":"x","cache":{"defaultTtl":-1,"maxEntries":1.5,"x":1}},"d":{"command":"x","cache":{"ttl":"1s","maxTtl":"-1s","maxEntries":-1}}}}`,
		`{"mcpServers":{"a":{"url":"http://h/mcp","auth":{"type":"oauth","clientId":"${SET}","clientSecret":"${UNSET}","scopes":["x",1],"redirectUrl":"http://127.0.0.1:1/cb","z":{}}}}}`,
		`{"mcpServers":{"a":{"command":"x","auth":{"clientSecret":"s"}}}}`,
		`{"mcpServers":{"a":{"command":"x","inheritEnv":["AWS_*","*","GITHUB_TOKEN","1BAD","A*B",7]},"b":{"url":"http://h","inheritEnv":["X"]}}}`,
		`{"mcpServers":{"a":{"url":"http://h/mcp","auth":{"type":"jwt_bearer","issuer":"${ISS}","clientId":"c","assertionFile":"/t","idTokenFile":"/x"}},"b":{"url":"http://h","auth":{"type":"client_credentials","clientSecret":"s"}}}}`,
		`{"mcpServers":{"a":{"command":"${"}}}`,
		`{"mcpServers":{"a":{"command":"${UNSET:-${SET}}","args":["${SET:-{x}}","${UNSET:-${UNSET2:-{\"a\":1}}}","${A:-{"]}}}`,
		"\ufeff{\"mcpServers\":{\"a\":{\"command\":\"x\"}}}",
		`{"mcpServers":{"kb":{"url":"http://h/mcp","maxConcurrentCalls":2,"prefix":"docs","description":"Wiki.","tools":{"search":{"name":"s","description":"d","enabled":false,"arguments":{"t":{"hide":true,"default":{"a":[1]}},"q":{"name":"query","description":"x"}}}}}}}`,
		`{"mcpServers":{"kb":{"command":"x","maxConcurrentCalls":-1.5,"prefix":"a b","description":[],"tools":{"":{"arguments":{"x":{"name":"","hide":"y","z":1}}},"b":1}}}}`,
		`[]`, `{`, ``, `null`, `{"mcpServers":null}`,
	} {
		f.Add([]byte(s))
	}
	lookup := func(name string) (string, bool) {
		switch name {
		case "SET":
			return "value", true
		case "EMPTY":
			return "", true
		}
		return "", false
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, problems := Parse(data, Options{Lookup: lookup})
		if len(problems) > 0 {
			if doc != nil {
				t.Fatal("a Document came back with problems")
			}
			checkProblems(t, problems, len(data))
			return
		}
		if doc == nil || len(doc.Servers) == 0 {
			t.Fatal("no problem, but no servers")
		}
		checkServers(t, doc.Servers)
	})
}

// checkServers fails unless the servers hold what Parse promises: valid
// and distinct names, a known transport with its command or URL, no
// negative durations, a cache that is off or on, an auth of one kind, no
// negative call cap, prefixes and tool names that are names.
func checkServers(t *testing.T, servers []Server) {
	t.Helper()
	seen := make(map[string]bool)
	for _, s := range servers {
		if !serverNameRE.MatchString(s.Name) {
			t.Fatalf("server name %q does not match %s", s.Name, serverNameRE)
		}
		if seen[s.Name] {
			t.Fatalf("server %q appears twice", s.Name)
		}
		seen[s.Name] = true
		switch s.Transport {
		case "stdio", "http", "sse":
		default:
			t.Fatalf("server %q: transport %q", s.Name, s.Transport)
		}
		if (s.Transport == "stdio") != (s.Command != "") {
			t.Fatalf("server %q: transport %q with command %q", s.Name, s.Transport, s.Command)
		}
		if (s.Transport == "stdio") == (s.URL != "") {
			t.Fatalf("server %q: transport %q with url %q", s.Name, s.Transport, s.URL)
		}
		if s.Timeout < 0 || s.MaxTotalTimeout < 0 {
			t.Fatalf("server %q: timeout %v, maxTotalTimeout %v", s.Name, s.Timeout, s.MaxTotalTimeout)
		}
		for name, tool := range s.Tools {
			if tool.Timeout < 0 {
				t.Fatalf("server %q, tool %q: timeout %v", s.Name, name, tool.Timeout)
			}
		}
		if c := s.Cache; c != nil && (c.DefaultTTL < 0 || c.MaxTTL < 0 || c.MaxEntries < 0 || c.Off && *c != Cache{Off: true}) {
			t.Fatalf("server %q: cache %+v", s.Name, c)
		}
		if a := s.Auth; a != nil && (a.Bearer != "") == (a.OAuth != nil) {
			t.Fatalf("server %q: auth %+v", s.Name, a)
		}
		if s.MaxConcurrentCalls < 0 || s.Prefix != "" && !serverNameRE.MatchString(s.Prefix) {
			t.Fatalf("server %q: maxConcurrentCalls %d, prefix %q", s.Name, s.MaxConcurrentCalls, s.Prefix)
		}
		for name, tool := range s.Tools {
			if name == "" || tool == nil || tool.Name != "" && !serverNameRE.MatchString(tool.Name) {
				t.Fatalf("server %q: tool transform %q: %+v", s.Name, name, tool)
			}
			for an, a := range tool.Arguments {
				if a == nil || len(a.Default) > 0 && !json.Valid(a.Default) {
					t.Fatalf("server %q: tool %q: argument %q: %+v", s.Name, name, an, a)
				}
			}
		}
	}
}

// checkProblems fails unless every problem has a message and a position
// inside a document of n bytes, and there are at most MaxProblems of them
// and the one that counts the rest.
func checkProblems(t *testing.T, problems []Problem, n int) {
	t.Helper()
	if len(problems) > MaxProblems+1 {
		t.Fatalf("%d problems", len(problems))
	}
	for _, p := range problems {
		if p.Msg == "" {
			t.Fatalf("problem %+v has no message", p)
		}
		if p.Line < 0 || p.Column < 0 || (p.Line == 0) != (p.Column == 0) || p.Column > n+1 {
			t.Fatalf("problem %+v has a bad position for a document of %d bytes", p, n)
		}
	}
}

// FuzzURLShown: urlShown never shows a password written in a URL's
// userinfo (user:password@host), whatever surrounds it.
func FuzzURLShown(f *testing.F) {
	for _, s := range []string{"ftp://u:pw@h/x", "u:pw@h", "ht tp://a:b@c/?k=v#f", "://:@", "http://h?a&b=c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		const pw = "Zq9pw"
		if strings.Contains(s, pw) {
			return
		}
		in := "ftp://" + s + ":" + pw + "@host/mcp"
		if i := strings.IndexAny(s, "/?#@"); i >= 0 {
			return // the userinfo would end before the password
		}
		if got := urlShown(in); strings.Contains(got, pw) {
			t.Fatalf("urlShown(%q) = %q", in, got)
		}
	})
}

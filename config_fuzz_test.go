package mcpadapter

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var configNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func FuzzParseConfig(f *testing.F) {
	files, err := filepath.Glob("testdata/config/*.json")
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
		`{"mcpServers":{"a b":{"type":"http","transport":"stdio","timeout":-1,"disabled":true}}}`,
		`{"mcpServers":{"a":{"command":"x","disabled":1,"includeTools":[1],"excludeTools":"x"}}}`,
		`{"mcpServers":{}, "servers":{}}`,
		`{"mcpServers":{"a":{"url":"http://h","cache":{"defaultTtl":"30s","maxTtl":60,"maxEntries":5}},"b":{"command":"x","cache":false},"c":{"command":"x","cache":{"defaultTtl":-1,"maxEntries":1.5,"x":1}},"d":{"command":"x","cache":{"ttl":"1s","maxTtl":"-1s","maxEntries":-1}}}}`,
		`{"mcpServers":{"a":{"url":"http://h/mcp","auth":{"type":"oauth","clientId":"${SET}","clientSecret":"${UNSET}","scopes":["x",1],"redirectUrl":"http://127.0.0.1:1/cb","z":{}}}}}`,
		`{"mcpServers":{"a":{"command":"x","auth":{"clientSecret":"s"}}}}`,
		`{"mcpServers":{"a":{"command":"${"}}}`,
		"\ufeff{\"mcpServers\":{\"a\":{\"command\":\"x\"}}}",
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
		cfg, err := ParseConfigEnv(data, lookup)
		if err != nil {
			if cfg != nil {
				t.Fatal("a Config came back with an error")
			}
			checkConfigErrors(t, err, len(data))
			return
		}
		if len(cfg.Servers) == 0 {
			t.Fatal("no error, but no servers")
		}
		seen := make(map[string]bool)
		for _, s := range cfg.Servers {
			if !configNameRE.MatchString(s.Name) {
				t.Fatalf("server name %q does not match %s", s.Name, configNameRE)
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
			if s.Timeout < 0 {
				t.Fatalf("server %q: timeout %v", s.Name, s.Timeout)
			}
			if c := s.Cache; c != nil && (c.DefaultTTL < 0 || c.MaxTTL < 0 || c.MaxEntries < 0 || s.NoCache) {
				t.Fatalf("server %q: cache %+v, noCache %v", s.Name, c, s.NoCache)
			}
		}
	})
}

// checkConfigErrors fails unless err is, or joins only, *ConfigErrors with
// a message and a position inside a document of n bytes.
func checkConfigErrors(t *testing.T, err error, n int) {
	t.Helper()
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			checkConfigErrors(t, e, n)
		}
		return
	}
	ce, ok := err.(*ConfigError)
	if !ok {
		t.Fatalf("error %v (%T) is not a *ConfigError", err, err)
	}
	if ce.Msg == "" {
		t.Fatalf("error %+v has no message", ce)
	}
	if ce.Line < 0 || ce.Column < 0 || (ce.Line == 0) != (ce.Column == 0) || ce.Column > n+1 {
		t.Fatalf("error %+v has a bad position for a document of %d bytes", ce, n)
	}
}

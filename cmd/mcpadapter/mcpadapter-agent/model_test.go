package main

import (
	"net"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/mcpadapter-agent/internal/fakeopenai"
)

// TestAgentNoKey: with no API key, no Authorization header is sent (not
// "Bearer none"), and the 401 that follows is said in plain words that
// name the missing key, in one line.
func TestAgentNoKey(t *testing.T) {
	unauthorized := fakeopenai.Turn{Status: 401, Error: "You didn't provide an API key.", Code: "invalid_api_key"}
	fake := fakeopenai.Start(t, unauthorized, unauthorized)
	r := cli(t, "", "agent", "--model", "m", "--base-url", fake.URL, "--once", "hi")
	r.Must(t, 2, nil, []string{"mcpadapter: the model server at " + fake.URL + " wants an API key and none is set",
		`401 Unauthorized: "You didn't provide an API key."`, "pass --api-key or set $OPENAI_API_KEY", "(--verbose shows more)"})
	reqs := fake.Requests()
	if len(reqs) != 1 || reqs[0].Authorization != "" {
		t.Fatalf("requests %+v, want one without Authorization", reqs)
	}
	noJargon(t, r.Stderr)
	// A loopback server usually needs no key: nothing is said up front.
	if strings.Contains(r.Stderr, "no API key is set") {
		t.Errorf("a note about the key for a loopback server:\n%s", r.Stderr)
	}
	// --verbose shows the framework's own error too.
	r = cli(t, "", "-v", "agent", "--model", "m", "--base-url", fake.URL, "--once", "hi")
	r.Must(t, 2, nil, []string{"wants an API key and none is set", "NodeRunError"})
}

// TestAgentModelErrors: a refused key, an unknown model and a server that
// is not there are each one line in plain words; a key the server echoes
// is not printed.
func TestAgentModelErrors(t *testing.T) {
	const key = "sk-test-0123456789abcdef"
	bad := fakeopenai.Start(t, fakeopenai.Turn{Status: 401, Error: "Incorrect API key provided: " + key + ".", Code: "invalid_api_key"})
	r := cli(t, "", "agent", "--model", "m", "--base-url", bad.URL, "--api-key", key, "--once", "hi")
	r.Must(t, 2, nil, []string{"the model server at " + bad.URL + " refused the API key", "Incorrect API key provided: [api key].", "check --api-key"})
	if strings.Contains(r.Stderr, key) {
		t.Errorf("the key is on stderr:\n%s", r.Stderr)
	}
	if got := bad.Requests()[0].Authorization; got != "Bearer "+key {
		t.Errorf("Authorization %q", got)
	}
	noJargon(t, r.Stderr)

	missing := fakeopenai.Start(t, fakeopenai.Turn{Status: 404, Error: "The model `gpt-9` does not exist or you do not have access to it.", Code: "model_not_found"})
	r = cli(t, "", "agent", "--model", "gpt-9", "--base-url", missing.URL, "--no-stream", "--once", "hi")
	r.Must(t, 2, nil, []string{`model "gpt-9" was not found at ` + missing.URL, "404 Not Found", "check --model"})
	noJargon(t, r.Stderr)

	// A port nobody listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + l.Addr().String() + "/v1"
	l.Close()
	r = cli(t, "", "agent", "--model", "m", "--base-url", gone, "--once", "hi")
	r.Must(t, 2, nil, []string{"cannot reach the model server at " + gone + ": connection refused; is it running"})
	noJargon(t, r.Stderr)
}

// noJargon fails if the last line of stderr has the agent framework's
// error text.
func noJargon(t *testing.T, stderr string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	if strings.Contains(last, "NodeRunError") || strings.Contains(last, "node path") || !strings.HasPrefix(last, "mcpadapter: ") {
		t.Errorf("the error is not one plain line:\n%s", stderr)
	}
}

// TestKeyNote: without a key, a server elsewhere (OpenAI by default) is
// named before the first request; a server on this machine is not.
func TestKeyNote(t *testing.T) {
	for _, tc := range []struct {
		baseURL, key string
		note         bool
	}{
		{"", "", true},
		{"https://api.example.com/v1", "", true},
		{"http://10.0.0.5:8000/v1", "", true},
		{"https://api.example.com/v1", "sk-1", false},
		{"http://127.0.0.1:11434/v1", "", false},
		{"http://localhost:8000/v1", "", false},
		{"http://[::1]:8000/v1", "", false},
	} {
		note := newModelEndpoint(tc.baseURL, "m", tc.key).keyNote()
		if (note != "") != tc.note {
			t.Errorf("%q, key %q: note %q", tc.baseURL, tc.key, note)
		}
		if tc.baseURL == "" && !strings.Contains(note, defaultBaseURL) {
			t.Errorf("the default server is not named: %q", note)
		}
	}
}

// FuzzAPIMessage: whatever a model server answers with, the message taken
// from it is one line of at most 200 characters.
func FuzzAPIMessage(f *testing.F) {
	f.Add([]byte(`{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","code":"invalid_api_key"}}`))
	f.Add([]byte("<html>\n<body>Bad Gateway</body></html>"))
	f.Add([]byte(`{"error":{"message":"a\nb"}}`))
	f.Add([]byte(`{"error":"just a string"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		m := apiMessage(body)
		if strings.Contains(m, "\n") || utf8.RuneCountInString(m) > 200 || !utf8.ValidString(m) {
			t.Fatalf("apiMessage(%q) = %q", body, m)
		}
	})
}

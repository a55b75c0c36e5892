package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

// textForms are free texts (an error's, a log line's, a server's stderr)
// each holding one secret (S3CR and a number) in a form a person or a
// program writes it: a JWT glued to a word, a secret member of JSON or
// YAML quoted in text, header lines and Go's printing of http.Header,
// URL userinfo, a command line's flag, a shell assignment, a JSON escape
// inside a scheme's name.
var textForms = map[string]string{
	"invalid token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.S3CR-01": "invalid token [REDACTED]",
	"id_token_eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.S3CR-02":      "id_token_[REDACTED]",
	`body: {"password": "S3CR-03", "user": "ann"} (400)`:         `body: {"password": "[REDACTED]", "user": "ann"} (400)`,
	`level=info msg=login "access_token":"S3CR-04"`:              `level=info msg=login "access_token":"[REDACTED]"`,
	`{\"client_secret\":\"S3CR-05\",\"n\":1}`:                    `{\"client_secret\":\"[REDACTED]\",\"n\":1}`,
	`{"otp": 123456, "ok": true}`:                                `{"otp": [REDACTED], "ok": true}`,
	"password: S3CR-06":                                          "password: [REDACTED]",
	"config:\n  api_key: S3CR-07\n  port: 8080\n":                "config:\n  api_key: [REDACTED]\n  port: 8080\n",
	"GET / HTTP/1.1\nCookie: sid=S3CR-08; theme=dark\nHost: h":   "GET / HTTP/1.1\nCookie: [REDACTED]\nHost: h",
	"HTTP/1.1 200 OK\r\nSet-Cookie: sid=S3CR-09; Path=/\r\n":     "HTTP/1.1 200 OK\r\nSet-Cookie: [REDACTED]\r\n",
	"X-Api-Key: S3CR-10":                                         "X-Api-Key: [REDACTED]",
	"api-key:S3CR-11":                                            "api-key:[REDACTED]",
	"map[Accept:[*/*] Cookie:[a=S3CR-12] X-Api-Key:[S3CR-13]]":   "map[Accept:[*/*] Cookie:[REDACTED] X-Api-Key:[REDACTED]]",
	"Post \"https://ann:S3CR-14@h/mcp\": refused":                "Post \"https://ann:[REDACTED]@h/mcp\": refused",
	"server --token S3CR-15 --port 8080":                         "server --token [REDACTED] --port 8080",
	"server -api-key S3CR-16":                                    "server -api-key [REDACTED]",
	`export GITHUB_TOKEN="S3CR-17"`:                              `export GITHUB_TOKEN="[REDACTED]"`,
	`{"error":"x","detail":"Bear\u0065r S3CR-18"}`:               `{"error":"x","detail":"Bearer [REDACTED]`,
	`X-Auth-Token: S3CR-19`:                                      `X-Auth-Token: [REDACTED]`,
	"secret=S3CR-20":                                             "secret=[REDACTED]",
}

// TestRedactTextForms: each form's secret is hidden in error text
// (RedactURLSecrets) and inside a JSON string of a trace (RedactJSON).
func TestRedactTextForms(t *testing.T) {
	for in, want := range textForms {
		if got := RedactURLSecrets(in); got != want {
			t.Errorf("RedactURLSecrets(%q)\n = %q\nwant %q", in, got, want)
		}
		doc, _ := json.Marshal(map[string]string{"text": in})
		if got := RedactJSON(doc); strings.Contains(got, "S3CR") {
			t.Errorf("RedactJSON(%s) = %s", doc, got)
		}
	}
}

// proseForms are texts with no secret that the redaction leaves as they
// are: a colon after a secret-sounding word in a sentence, flags with no
// value, a URL with a user but no password, a word ending in eyJ.
var proseForms = []string{
	"the server refused the token: it expired",
	"missing key: foo",
	"error code: 404",
	"server --no-auth --port 8080",
	"https://ann@h/mcp",
	"https://h/mcp?page=2",
	"time: 12:30:00",
	"see heyJude.mp3",
	"mcp recv {\"jsonrpc\":\"2.0\",\"id\":1}",
	"cookie monster: blue",
}

func TestRedactTextFormsLeaveProse(t *testing.T) {
	for _, in := range proseForms {
		if got := RedactURLSecrets(in); got != in {
			t.Errorf("RedactURLSecrets(%q) = %q, want it unchanged", in, got)
		}
	}
}

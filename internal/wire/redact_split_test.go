package wire

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode"
)

// splitForms are texts whose secret (S3CR and a number) is written in a
// form the first text rules missed: on the line after its name (a header
// folded onto the next line, a YAML block, a PEM key), after a quote
// (Go's %q of a line, curl's -H "Name: value"), quoted with a space in
// it, a Python dict's single quotes, curl's -u user:password, a
// parameter of a percent-encoded URL inside another, a scheme followed by
// a no-break space.
var splitForms = map[string]string{
	"X-Api-Key:\n S3CR-01\nHost: h":                                                        "X-Api-Key:[REDACTED]\nHost: h",
	"token: |\n  S3CR-02\n  S3CR-03\nport: 8080":                                           "token: [REDACTED]\nport: 8080",
	"-----BEGIN RSA PRIVATE KEY-----\nS3CR-04\nS3CR-05\n-----END RSA PRIVATE KEY-----\nok": "-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----\nok",
	"-----BEGIN OPENSSH PRIVATE KEY-----\nS3CR-06":                                         "-----BEGIN OPENSSH PRIVATE KEY-----[REDACTED]",
	`lines: ["GITHUB_TOKEN=S3CR-07" "next"]`:                                               `lines: ["GITHUB_TOKEN=[REDACTED]" "next"]`,
	`curl -H "X-Api-Key: S3CR-08" https://h`:                                               `curl -H "X-Api-Key: [REDACTED]" https://h`,
	`curl -H 'Cookie: sid=S3CR-09; a=b' https://h`:                                         `curl -H 'Cookie: [REDACTED]' https://h`,
	`export PASSWORD="S3CR-10 S3CR-11" next`:                                               `export PASSWORD="[REDACTED]" next`,
	`PASSWORD='S3CR-12 S3CR-13' next`:                                                      `PASSWORD='[REDACTED]' next`,
	`config {'password': 'S3CR-14', 'user': 'ann'}`:                                        `config {'password': '[REDACTED]', 'user': 'ann'}`,
	`curl -u ann:S3CR-15 https://h`:                                                        `curl -u ann:[REDACTED] https://h`,
	`curl --user ann:S3CR-16 https://h`:                                                    `curl --user ann:[REDACTED] https://h`,
	"login?next=https%3A%2F%2Fh%2Fcb%3Fcode%3DS3CR-17%26state%3Ds":                         "login?next=https%3A%2F%2Fh%2Fcb%3Fcode%3D[REDACTED]%26state%3Ds",
	"a=1;token=S3CR-18":                                                                    "a=1;token=[REDACTED]",
	"(api_key=S3CR-19)":                                                                    "(api_key=[REDACTED]",
	"Bearer\u00a0S3CR-20 next":                                                             "Bearer [REDACTED] next",
}

// TestRedactSplitForms: each form's secret is hidden in error text
// (RedactURLSecrets), inside a JSON string of a trace (RedactJSON), and
// the text around it is kept.
func TestRedactSplitForms(t *testing.T) {
	for in, want := range splitForms {
		if got := RedactURLSecrets(in); got != want {
			t.Errorf("RedactURLSecrets(%q)\n = %q\nwant %q", in, got, want)
		}
		doc, _ := json.Marshal(map[string]string{"text": in})
		if got := RedactJSON(doc); strings.Contains(got, "S3CR") {
			t.Errorf("RedactJSON(%s) = %s", doc, got)
		}
	}
}

// A member's name holds a secret too (a map of headers or of URLs as
// JSON keys): RedactJSON hides it in the name and keeps the member (its
// value hidden too where the name is a secret one).
func TestRedactJSONMemberNames(t *testing.T) {
	in := `{"headers":{"Authorization: Bearer S3CR-21":true,"https://ann:S3CR-22@h/?token=S3CR-23":1,"plain":"x"}}`
	got := RedactJSON([]byte(in))
	want := `{"headers":{"Authorization: Bearer [REDACTED]":true,"https://ann:[REDACTED]@h/?token=[REDACTED]":"[REDACTED]","plain":"x"}}`
	if got != want {
		t.Errorf("RedactJSON(%s)\n = %s\nwant %s", in, got, want)
	}
}

// splitProse is text with no secret that the rules above leave alone.
var splitProse = []string{
	"config:\n  api_key: [REDACTED]\n  port: 8080",
	"user: ann\n  note: x",
	`he said "hello: world"`,
	"sort -u file",
	"curl -u ann https://h",
	"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
	"https%3A%2F%2Fh%2Fcb%3Fpage%3D2",
	`{'name': 'x', 'size': 3}`,
}

func TestRedactSplitFormsLeaveProse(t *testing.T) {
	for _, in := range splitProse {
		if got := RedactURLSecrets(in); got != in {
			t.Errorf("RedactURLSecrets(%q) = %q, want it unchanged", in, got)
		}
	}
}

// A scheme whose name is an English word followed by a lower-case word
// is prose and kept; a credential after that word is still hidden.
func TestRedactSchemeWords(t *testing.T) {
	for in, want := range map[string]string{
		"Basic usage: mcpadapter tools":   "Basic usage: mcpadapter tools",
		"unsupported digest algorithm":    "unsupported digest algorithm",
		"negotiate the version first":     "negotiate the version first",
		"Concealed authentication failed": "Concealed authentication failed",
		"digest basic dXNlcjpTM0NSLTMw":   "digest basic [REDACTED]",
		"Basic abcd":                      "Basic [REDACTED]",
		"Basic dXNlcjpwYXNz":              "Basic [REDACTED]",
		"Bearer token":                    "Bearer [REDACTED]",
		"negotiate the Bearer S3CR-31":    "negotiate the Bearer [REDACTED]",
	} {
		if got := RedactURLSecrets(in); got != want {
			t.Errorf("RedactURLSecrets(%q) = %q, want %q", in, got, want)
		}
	}
}

// placedForms are forms of a secret (%s) that text around them, on lines
// of their own, does not change.
var placedForms = []string{
	"X-Api-Key:\n %s", "token: |\n  x%s", "-----BEGIN RSA PRIVATE KEY-----\n%s\n-----END RSA PRIVATE KEY-----",
	`["GITHUB_TOKEN=%s"]`, `curl -H "X-Api-Key: %s"`, `curl -H 'Cookie: a=%s'`, `PASSWORD="a %s"`,
	`{'password': 'a %s'}`, "curl -u ann:%s", "a%%3Ftoken%%3D%s%%26b", "Bearer\u00a0%s", "digest basic %s",
	"Authorization: Bearer\n  %s", `{\"password\":\"%s\"}`, "cookie: a=1;\n b=2, sid=%s",
}

// FuzzRedactTextPlaces: a secret in each of placedForms, between any two
// texts, never comes out of RedactURLSecrets or RedactJSON.
func FuzzRedactTextPlaces(f *testing.F) {
	f.Add("before", "after", "abc123")
	f.Add("{\"a\":\"", "\"}", "Z")
	f.Add("Basic usage:", "-----END", "x")
	f.Fuzz(func(t *testing.T, before, after, secret string) {
		marked := "S3CR" + strings.Map(func(r rune) rune {
			if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
				return r
			}
			return -1
		}, secret)
		for _, form := range placedForms {
			text := before + "\n" + fmt.Sprintf(form, marked) + "\n" + after
			if strings.Count(text, "S3CR") != 1 {
				continue
			}
			if got := RedactURLSecrets(text); strings.Contains(got, "S3CR") {
				t.Fatalf("RedactURLSecrets(%q)\n = %q", text, got)
			}
			doc, _ := json.Marshal(map[string]string{"t": text})
			if got := RedactJSON(doc); strings.Contains(got, "S3CR") {
				t.Fatalf("RedactJSON(%s)\n = %s", doc, got)
			}
		}
	})
}

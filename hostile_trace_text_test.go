package mcpadapter_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
)

// textTraceForms are texts a tool call carries, each with one secret
// (S3CR and a number) as a person or a program writes it in text: a JWT
// glued to a word, header lines (Cookie, Set-Cookie, X-Api-Key), Go's
// printing of http.Header, YAML, a JSON member quoted in a log line, URL
// userinfo, a command line's flag, a quoted shell value. They are JSON
// string contents, as the request holds them.
var textTraceForms = []string{
	`id_token_eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.S3CR-01`,
	`GET / HTTP/1.1\nCookie: sid=S3CR-02; theme=dark\nHost: h`,
	`HTTP/1.1 200 OK\r\nSet-Cookie: sid=S3CR-03; Path=/`,
	`X-Api-Key: S3CR-04`,
	`map[Accept:[*/*] Api-Key:[S3CR-05]]`,
	`config:\n  password: S3CR-06\n  port: 8080`,
	`level=info msg=login \"client_secret\": \"S3CR-07\" user=ann`,
	`see https://ann:S3CR-08@h/mcp`,
	`ran: server --token S3CR-09 --port 8080`,
	`export GITHUB_TOKEN=\"S3CR-10\"`,
}

// A traced call carrying a secret in each of textTraceForms, echoed back
// by the server (traced both ways), over stdio and streamable HTTP,
// shows none of them; the secret's neighbours stay readable.
func TestHostileTraceRedactionTextForms(t *testing.T) {
	testTracedEchoes(t, []string{"stdio", "streamable"}, textTraceForms,
		[]string{"Host: h", "port: 8080", "user=ann", "--port 8080", "https://ann:[REDACTED]@h/mcp"}, 0)
}

// A stdio server that prints credentials to stderr and exits: the error
// that quotes its last stderr lines shows none of them, and still shows
// the lines.
func TestHostileStderrSecretsInError(t *testing.T) {
	ctx := testCtx(t)
	script := `echo "starting with Authorization: Bearer S3CR-11" >&2
echo "GITHUB_TOKEN=S3CR-12" >&2
echo "  api_key: S3CR-13" >&2
echo "fetch https://ann:S3CR-14@h/x?token=S3CR-15 failed" >&2
echo "fatal: bad credentials" >&2
exit 3`
	msg := leakyShellError(ctx, t, script, nil).Error()
	if !strings.Contains(msg, "fatal: bad credentials") || !strings.Contains(msg, "GITHUB_TOKEN=[REDACTED]") ||
		!strings.Contains(msg, "https://ann:[REDACTED]@h/x?token=[REDACTED] failed") {
		t.Errorf("the error lacks the server's stderr:\n%s", msg)
	}
	if strings.Contains(msg, "S3CR") {
		t.Errorf("the error shows a secret:\n%s", msg)
	}
}

// A server's error that echoes what it was asked (a prompt's name holding
// a password and a token) reaches the caller without them.
func TestHostileServerErrorEchoRedacted(t *testing.T) {
	ctx := testCtx(t)
	c, err := mcpadapter.NewClient(stdioServer(t), &mcpadapter.ClientOptions{Name: "echoing"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.GetPrompt(ctx, "https://ann:S3CR-16@h/r?access_token=S3CR-17", nil)
	if err == nil {
		t.Fatal("GetPrompt of an unknown prompt succeeded")
	}
	if msg := err.Error(); strings.Contains(msg, "S3CR") || !strings.Contains(msg, "https://ann:[REDACTED]@h/r") {
		t.Errorf("the error: %s", msg)
	}
}

// leakyShellError lists the tools of a stdio server run as /bin/sh -c
// script, named leaky, with logger (nil: the default), and returns the
// *TransportError the listing fails with.
func leakyShellError(ctx context.Context, t *testing.T, script string, logger *slog.Logger) error {
	t.Helper()
	c, err := mcpadapter.NewClient(mcpadapter.Command{Path: "/bin/sh", Args: []string{"-c", script}},
		&mcpadapter.ClientOptions{Name: "leaky", Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Tools(ctx)
	var te *mcpadapter.TransportError
	if !errors.As(err, &te) {
		t.Fatalf("Tools: %v, want a *TransportError", err)
	}
	return err
}

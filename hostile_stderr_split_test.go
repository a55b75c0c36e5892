package mcpadapter_test

import (
	"log/slog"
	"strings"
	"testing"
)

// A stdio server that prints secrets split across its stderr lines (a
// header folded onto the next line, a YAML block, a PEM private key), in
// forms of one line the first rules missed (a Python dict, curl's -u and
// -H "Name: value", a quoted value with a space, a URL inside a URL's
// query), one cut by the 500-byte cut of a stderr line, and, once it has
// read a request, two lines on stdout that are not JSON-RPC (logged by
// the client, quoted in the error), then exits. The error quoting its stderr and stdout shows none
// of them, nor does the client's log; the lines around them stay.
func TestHostileStderrSecretsSplit(t *testing.T) {
	ctx := testCtx(t)
	pad := strings.Repeat("x", 470)
	script := `read -r request
echo "Authorization: Bearer" >&2
echo "    S3CR-01" >&2
echo "X-Api-Key:" >&2
echo "  S3CR-02" >&2
echo "Cookie: theme=dark;" >&2
echo "  sid=S3CR-03" >&2
echo "token: |" >&2
echo "  S3CR-04" >&2
echo "-----BEGIN RSA PRIVATE KEY-----" >&2
echo "MIIS3CR05" >&2
echo "AAS3CR06" >&2
echo "-----END RSA PRIVATE KEY-----" >&2
echo "config {'password': 'S3CR-07', 'user': 'ann'}" >&2
echo "ran curl -u ann:S3CR-08 -H \"X-Api-Key: S3CR-09\" https://h" >&2
echo "PASSWORD=\"S3CR-10 S3CR-11\" keep-me" >&2
echo "redirect https://h/login?next=https%3A%2F%2Fh%2Fcb%3Faccess_token%3DS3CR-12%26s%3D1" >&2
echo "` + pad + ` token=S3CR-13abcdefghijklmnopqrstuvwxyz0123456789" >&2
echo "Basic usage: fatal: bad credentials" >&2
echo "GITHUB_TOKEN=S3CR-14"
echo "Authorization: Bearer S3CR-15"
exit 3`
	var logs syncBuffer
	msg := leakyShellError(ctx, t, script, slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))).Error()
	for _, kept := range []string{"Basic usage: fatal: bad credentials", "keep-me", "'user': 'ann'", "-----END RSA PRIVATE KEY-----"} {
		if !strings.Contains(msg, kept) {
			t.Errorf("the error lacks %q:\n%s", kept, msg)
		}
	}
	if strings.Contains(msg, "S3CR") {
		t.Errorf("the error shows a secret:\n%s", msg)
	}
	out := logs.String()
	if !strings.Contains(out+msg, "GITHUB_TOKEN=[REDACTED]") {
		t.Errorf("neither the error nor the client's log quotes the stray stdout line:\n%s\n%s", msg, out)
	}
	noSecretLines(t, "the client's log", out)
}

package mcpadapter_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// Secrets the trace must not print in clear: members
// named auth, key, private_key, pwd, pass, jwt, otp; an object under a
// secret name; ?code= and &access_token= inside a string, here echoed back
// by the server, so they appear in both directions.
func TestHostileTraceRedaction(t *testing.T) {
	for _, transport := range []string{"stdio", "in-process", "streamable"} {
		t.Run(transport, func(t *testing.T) {
			ctx := testCtx(t)
			c, logs := tracedClient(t, transport)
			text := `{"text":"see https://h/cb?code=c0de-1&state=s and https://h/x?a=1&access_token=t0k-2"}`
			res, err := c.CallTool(ctx, "echo", json.RawMessage(text), nil)
			if err != nil || !strings.Contains(res.Text(), "c0de-1") {
				t.Fatalf("echo: %v %v", err, res)
			}
			// Members echo does not take: the server refuses the call,
			// after the trace has shown the request.
			args := `{"text":"x","auth":"auth-3","key":"key-4","private_key":"pk-5","pwd":"pwd-6","pass":"pass-7",
				"jwt":"jwt-8","otp":"otp-9","token":{"value":"tv-10"}}`
			if _, err := c.CallTool(ctx, "echo", json.RawMessage(args), nil); err != nil {
				t.Fatal(err)
			}
			out := logs.String()
			if !strings.Contains(out, "mcp recv") || !strings.Contains(out, "https://h/cb?code=[REDACTED]") {
				t.Errorf("trace lacks the exchange:\n%s", out)
			}
			for _, secret := range []string{"c0de-1", "t0k-2", "auth-3", "key-4", "pk-5", "pwd-6", "pass-7", "jwt-8", "otp-9", "tv-10"} {
				if strings.Contains(out, secret) {
					t.Errorf("trace leaks %q", secret)
				}
			}
		})
	}
}

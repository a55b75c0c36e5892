package engine

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// A server that answers server/discover with 401 or 403 speaks the
// 2026-07-28 protocol and refuses this client's authorization. go-sdk
// falls back to the initialize handshake on any failure of
// server/discover, and the client then to legacy SSE, which hides the
// refusal behind the old transports' answers ("Not Found").
// HandshakeMiddleware records the refusal and ends the connect with it
// instead.

// refusedError is a server's authorization refusal of a request: HTTP 401
// or 403, with what its WWW-Authenticate header said.
type refusedError struct {
	status    int
	challenge string // the header's error and description, or ""
	err       error  // go-sdk's error
}

func (e *refusedError) Error() string {
	msg := fmt.Sprintf("the server refused authorization: HTTP %d %s", e.status, http.StatusText(e.status))
	if e.challenge != "" {
		msg += ", WWW-Authenticate " + e.challenge
	}
	return msg
}

func (e *refusedError) Unwrap() error { return e.err }

// AuthRefusal returns the error for a request that failed with err after
// its POST was answered with 401 or 403, or nil if it was not. An error
// keep reports (a failed sign-in, or one to make) is returned as it is.
func AuthRefusal(rec *wire.RequestStatus, err error, keep func(error) bool) error {
	status := rec.Status()
	if err == nil || (status != http.StatusUnauthorized && status != http.StatusForbidden) {
		return nil
	}
	if keep != nil && keep(err) {
		return err
	}
	return &refusedError{status: status, challenge: describeChallenge(rec.Challenge()), err: err}
}

// describeChallenge says what a WWW-Authenticate header asks: the error,
// its description and the scope of its Bearer challenge, quoted (the
// server chose them; they are cut to 200 bytes each). The
// resource_metadata URL is left out.
func describeChallenge(header []string) string {
	cs, err := oauthex.ParseWWWAuthenticate(header)
	if err != nil {
		return ""
	}
	for _, c := range cs {
		if !strings.EqualFold(c.Scheme, "bearer") {
			continue
		}
		var parts []string
		for _, k := range []string{"error", "error_description", "scope"} {
			if v := c.Params[k]; v != "" {
				if len(v) > 200 {
					v = strings.ToValidUTF8(v[:200], "") + "..."
				}
				parts = append(parts, k+" "+strconv.Quote(v))
			}
		}
		return strings.Join(parts, ", ")
	}
	return ""
}

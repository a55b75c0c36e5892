package oauthflow

import (
	"context"
	"errors"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"
)

// Bound is the auth.OAuthHandler a client gives go-sdk for one server: a
// sign-in Handler or a GrantHandler, the DPoP key its tokens are bound to
// (nil: bearer tokens), and a failed sign-in (a *SignInError) reported as
// the error Refused makes of its cause.
type Bound struct {
	Flow    auth.OAuthHandler // *Handler or *GrantHandler
	DPoP    *DPoP
	Refused func(cause error) error
}

var _ auth.OAuthHandler = (*Bound)(nil)

// TokenSource returns the token source for outgoing requests, or nil
// before the first sign-in.
func (b *Bound) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	return b.Flow.TokenSource(ctx)
}

// Authorize signs in after a 401, or a 403 asking for more scopes.
func (b *Bound) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	err := b.Flow.Authorize(ctx, req, resp)
	var se *SignInError
	if errors.As(err, &se) {
		return b.Refused(se.Err)
	}
	return err
}

// Close ends a sign-in Handler's background saves of a token the shared
// store could not take, after one last try.
func (b *Bound) Close() {
	if h, ok := b.Flow.(*Handler); ok {
		h.Close()
	}
}

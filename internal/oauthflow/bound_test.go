package oauthflow

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"golang.org/x/oauth2"
)

// failing is a flow whose every sign-in fails with err.
type failing struct{ err error }

func (f failing) TokenSource(context.Context) (oauth2.TokenSource, error) { return nil, nil }
func (f failing) Authorize(context.Context, *http.Request, *http.Response) error {
	return f.err
}

// TestBoundRefused checks that a failed sign-in comes back as the error
// Refused makes of its cause, and any other error as it is.
func TestBoundRefused(t *testing.T) {
	cause := errors.New("access_denied")
	refused := errors.New("refused")
	b := &Bound{Flow: failing{&SignInError{Err: cause}}, Refused: func(err error) error { return errors.Join(refused, err) }}
	if err := b.Authorize(context.Background(), nil, nil); !errors.Is(err, refused) || !errors.Is(err, cause) {
		t.Fatalf("sign-in failure: %v", err)
	}
	other := errors.New("network")
	b.Flow = failing{other}
	if err := b.Authorize(context.Background(), nil, nil); err != other {
		t.Fatalf("other failure: %v, want it as it is", err)
	}
	b.Close() // not a *Handler: nothing to stop
}

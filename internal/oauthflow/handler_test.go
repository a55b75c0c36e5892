package oauthflow

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"golang.org/x/oauth2"
)

type tokenFunc func() (*oauth2.Token, error)

func (f tokenFunc) Token() (*oauth2.Token, error) { return f() }

// TestOAuthStaleSourceNotSaved: once a sign-in has replaced a token
// source, a late refresh by the old one does not overwrite the new token.
func TestOAuthStaleSourceNotSaved(t *testing.T) {
	ctx := context.Background()
	store := NewMemoryStore()
	h := NewHandler(Config{Store: store, Resource: "https://mcp.example/mcp"})
	oc := &oauth2.Config{ClientID: "c", Endpoint: oauth2.Endpoint{TokenURL: "https://as.example/token"}}
	h.mu.Lock()
	h.gen++
	old := h.saving(oc, tokenFunc(func() (*oauth2.Token, error) { return &oauth2.Token{AccessToken: "old-refreshed"}, nil }), "old", h.gen)
	h.gen++ // a sign-in installs a newer source
	newGen := h.gen
	h.mu.Unlock()
	h.save(oc, &oauth2.Token{AccessToken: "new"}, newGen)
	if _, err := old.Token(); err != nil {
		t.Fatal(err)
	}
	st, err := store.Load(ctx, "https://mcp.example/mcp")
	if err != nil || st == nil || st.Token.AccessToken != "new" {
		t.Errorf("stored %v, %v; want the sign-in's token", st, err)
	}
}

// attempt records what Authorize does with a connect attempt.
type attempt struct {
	failed  error
	paused  int
	resumed int
}

func (a *attempt) Pause() func()             { a.paused++; return func() { a.resumed++ } }
func (a *attempt) FailedSignIn() error       { return a.failed }
func (a *attempt) SetFailedSignIn(err error) { a.failed = err }

// response is an answer with status and no body.
func response(status int) *http.Response {
	return &http.Response{StatusCode: status, Header: http.Header{}, Body: http.NoBody}
}

// TestAuthorizeOncePerAttempt: a failed sign-in is a *SignInError, the
// attempt's clocks are paused meanwhile, and the rest of the attempt gets
// the same error without the user being asked again.
func TestAuthorizeOncePerAttempt(t *testing.T) {
	// Nothing to discover: the sign-in fails before the user is asked.
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	asked := 0
	h := NewHandler(Config{
		Resource:   srv.URL + "/mcp",
		HTTPClient: srv.Client(),
		OpenURL:    func(context.Context, string) error { asked++; return nil },
	})
	a := &attempt{}
	ctx := WithAttempt(context.Background(), a)
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/mcp", nil)

	err := h.Authorize(ctx, req, response(http.StatusUnauthorized))
	var se *SignInError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v (%T), want a *SignInError", err, err)
	}
	if a.failed != err || a.paused != 1 || a.resumed != 1 {
		t.Errorf("attempt after the sign-in: failed %v, paused %d, resumed %d", a.failed, a.paused, a.resumed)
	}
	if again := h.Authorize(ctx, req, response(http.StatusUnauthorized)); again != err || a.paused != 1 {
		t.Errorf("second Authorize in the attempt: %v, paused %d times; want the first error, no new sign-in", again, a.paused)
	}
	if asked != 0 {
		t.Errorf("the user was asked %d times", asked)
	}
}

// TestAuthorizePlainForbidden: a 403 that does not ask for more scopes is
// the server's answer, not a request to sign in.
func TestAuthorizePlainForbidden(t *testing.T) {
	h := NewHandler(Config{OpenURL: func(context.Context, string) error {
		t.Error("the user was asked to sign in")
		return nil
	}})
	a := &attempt{}
	ctx := WithAttempt(context.Background(), a)
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:1/mcp", nil)
	if err := h.Authorize(ctx, req, response(http.StatusForbidden)); err != nil || a.paused != 0 {
		t.Errorf("err = %v, paused %d", err, a.paused)
	}
}

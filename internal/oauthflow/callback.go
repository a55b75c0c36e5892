package oauthflow

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// loopbackFetcher gets the authorization code: it sends the user to the
// authorization page and serves the redirect on a loopback address until
// the browser comes back (RFC 8252 section 7.3). It serves on a listener
// opened for one sign-in.
type loopbackFetcher struct {
	ln          net.Listener
	redirectURL string
	path        string
	open        func(ctx context.Context, authURL string) error
	timeout     time.Duration
}

// CheckRedirectURL reports a redirect URL the flow cannot serve: it must
// be a loopback http URL with a port.
func CheckRedirectURL(redirect string) error {
	_, _, err := redirectTarget(redirect)
	return err
}

// redirectTarget checks a RedirectURL: it must be a loopback http URL
// with a port. It returns the address to listen on and the path.
func redirectTarget(redirect string) (addr, path string, err error) {
	u, err := url.Parse(redirect)
	if err != nil {
		return "", "", fmt.Errorf("OAuth.RedirectURL: %w", err)
	}
	host := u.Hostname()
	loopback := host == "localhost"
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		loopback = true
	}
	if u.Scheme != "http" || !loopback || u.Port() == "" {
		return "", "", fmt.Errorf("OAuth.RedirectURL %q: want a loopback http URL with a port, such as http://127.0.0.1:8976/callback (for other redirects use ClientOptions.OAuthHandler)", redirect)
	}
	if port, err := strconv.Atoi(u.Port()); err != nil || port == 0 || port > 65535 {
		return "", "", fmt.Errorf("OAuth.RedirectURL %q: port %s cannot be registered with the authorization server (the browser must come back to the same port); give a fixed port such as 8976, or leave RedirectURL empty for a free port chosen at each sign-in", redirect, u.Port())
	}
	path = u.EscapedPath()
	if path == "" {
		path = "/"
	}
	return net.JoinHostPort(host, u.Port()), path, nil
}

// listenRedirect opens the redirect listener for one sign-in: on a free
// port of 127.0.0.1 when redirect is empty, else on redirect's address,
// waiting up to timeout while another sign-in (another client given the
// same RedirectURL) holds it.
func listenRedirect(ctx context.Context, redirect string, timeout time.Duration) (*loopbackFetcher, error) {
	if redirect == "" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("serving the OAuth redirect: %w", err)
		}
		return &loopbackFetcher{ln: ln, path: "/callback", redirectURL: "http://" + ln.Addr().String() + "/callback"}, nil
	}
	addr, path, err := redirectTarget(redirect)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(timeout)
	for {
		ln, err := net.Listen("tcp", addr)
		if err == nil {
			return &loopbackFetcher{ln: ln, path: path, redirectURL: redirect}, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			return nil, fmt.Errorf("serving the OAuth redirect %s: %w", redirect, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("serving the OAuth redirect %s: %w", redirect, context.Cause(ctx))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// close releases the listener (fetch has closed it if it ran).
func (f *loopbackFetcher) close() { _ = f.ln.Close() }

// fetch is an auth.AuthorizationCodeFetcher.
func (f *loopbackFetcher) fetch(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	au, err := url.Parse(args.URL)
	if err != nil {
		return nil, fmt.Errorf("authorization URL: %w", err)
	}
	state := au.Query().Get("state")
	got := make(chan callbackResult, 1)
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { f.serve(w, r, state, got) }),
		ReadHeaderTimeout: 10 * time.Second,
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(f.ln)
	}()
	defer func() {
		// Let the browser get its page before the server goes away.
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			_ = srv.Close()
		}
		<-served
	}()

	wait, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()

	if err := f.open(ctx, args.URL); err != nil {
		return nil, fmt.Errorf("sending the user to the authorization page: %w", err)
	}
	select {
	case r := <-got:
		if r.err != nil {
			return nil, r.err
		}
		return r.res, nil
	case <-wait.Done():
		if ctx.Err() != nil {
			return nil, fmt.Errorf("waiting for the user to sign in: %w", context.Cause(ctx))
		}
		return nil, fmt.Errorf("the user did not finish signing in within %v (OAuth.Timeout)", f.timeout)
	}
}

type callbackResult struct {
	res *auth.AuthorizationResult
	err error
}

// serve handles one request to the loopback server. Only a request to the
// redirect path carrying this flow's state ends the wait.
func (f *loopbackFetcher) serve(w http.ResponseWriter, r *http.Request, state string, got chan<- callbackResult) {
	if r.URL.Path != f.path {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	if q.Get("state") != state {
		http.Error(w, "This sign-in link is stale or was not started here (state mismatch).", http.StatusBadRequest)
		return
	}
	var res callbackResult
	switch {
	case q.Get("error") != "":
		msg := q.Get("error")
		if d := q.Get("error_description"); d != "" {
			msg += ": " + d
		}
		res.err = fmt.Errorf("the authorization server refused: %s", msg)
	case q.Get("code") == "":
		res.err = errors.New("the authorization server redirected back without a code")
	default:
		res.res = &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
	}
	select {
	case got <- res:
	default:
		http.Error(w, "This sign-in has already completed.", http.StatusConflict)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if res.err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, "<!doctype html><title>mcpadapter</title><p>Sign-in failed: %s</p>", html.EscapeString(res.err.Error()))
		return
	}
	fmt.Fprint(w, "<!doctype html><title>mcpadapter</title><p>Signed in. You can close this window.</p>")
}

package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// loopbackFetcher gets the authorization code: it sends the user to the
// authorization page and serves the redirect on a loopback address until
// the browser comes back (RFC 8252 section 7.3).
type loopbackFetcher struct {
	redirectURL string
	addr        string // host:port to listen on
	path        string
	open        func(ctx context.Context, authURL string) error
	timeout     time.Duration
}

// newLoopbackFetcher checks redirect (or picks a free port when it is
// empty).
func newLoopbackFetcher(redirect string, open func(context.Context, string) error, timeout time.Duration) (*loopbackFetcher, error) {
	f := &loopbackFetcher{open: open, timeout: timeout}
	if redirect == "" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("choosing a port for the OAuth redirect: %w", err)
		}
		f.addr = ln.Addr().String()
		_ = ln.Close()
		f.path = "/callback"
		f.redirectURL = "http://" + f.addr + f.path
		return f, nil
	}
	u, err := url.Parse(redirect)
	if err != nil {
		return nil, fmt.Errorf("OAuth.RedirectURL: %w", err)
	}
	host := u.Hostname()
	loopback := host == "localhost"
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		loopback = true
	}
	if u.Scheme != "http" || !loopback || u.Port() == "" {
		return nil, fmt.Errorf("OAuth.RedirectURL %q: want a loopback http URL with a port, such as http://127.0.0.1:8976/callback (for other redirects use ClientOptions.OAuthHandler)", redirect)
	}
	f.addr = net.JoinHostPort(host, u.Port())
	f.path = u.EscapedPath()
	if f.path == "" {
		f.path = "/"
	}
	f.redirectURL = redirect
	return f, nil
}

// fetch is an auth.AuthorizationCodeFetcher.
func (f *loopbackFetcher) fetch(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	au, err := url.Parse(args.URL)
	if err != nil {
		return nil, fmt.Errorf("authorization URL: %w", err)
	}
	state := au.Query().Get("state")
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return nil, fmt.Errorf("serving the OAuth redirect %s: %w", f.redirectURL, err)
	}
	got := make(chan callbackResult, 1)
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { f.serve(w, r, state, got) }),
		ReadHeaderTimeout: 10 * time.Second,
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ln)
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

	// The user's sign-in does not count against the connect timeout.
	if st, ok := ctx.Value(dialKey{}).(*dialState); ok && st.deadline != nil {
		defer st.deadline.pause()()
	}
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

package engine

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// httpAnswer is the status and media type of an HTTP response.
type httpAnswer struct {
	status    int
	mediaType string
}

// firstAnswer records the first HTTP response of a connect attempt, for
// endpointHint.
type firstAnswer struct {
	next http.RoundTripper
	s    *Session
}

func (f *firstAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := f.next.RoundTrip(req)
	if err == nil && f.s.firstAnswer.Load() == nil {
		mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		f.s.firstAnswer.CompareAndSwap(nil, &httpAnswer{status: resp.StatusCode, mediaType: mt})
	}
	return resp, err
}

// endpointHint explains a failed connect to an HTTP URL whose first
// answer was 404, 405 or 501 (a static site or a web app refuses the
// POST) or an HTML page while its path is not /mcp or /sse: the URL is
// most likely a website or the service's root, not its MCP endpoint. It
// returns err, wrapped with the explanation and the likely endpoints when
// that is the case.
func (e *Engine) endpointHint(first *Session, err error) error {
	if first == nil || (e.cfg.Kind != Streamable && e.cfg.Kind != SSE) {
		return err
	}
	a := first.firstAnswer.Load()
	if a == nil {
		return err
	}
	var what string
	switch {
	case a.status == http.StatusNotFound, a.status == http.StatusMethodNotAllowed, a.status == http.StatusNotImplemented:
		what = fmt.Sprintf("%d %s", a.status, http.StatusText(a.status))
	case a.status/100 == 2 && (a.mediaType == "text/html" || a.mediaType == "application/xhtml+xml"):
		what = "an HTML page"
	default:
		return err
	}
	u, perr := url.Parse(e.cfg.URL)
	if perr != nil {
		return err
	}
	path := strings.TrimSuffix(u.Path, "/")
	if strings.HasSuffix(path, "/mcp") || strings.HasSuffix(path, "/sse") {
		return err
	}
	return &hintError{
		hint: fmt.Sprintf("%s answered the first request with %s, so it is probably not the server's MCP endpoint (MCP servers usually serve it at /mcp, or /sse for the legacy HTTP+SSE transport): try %s",
			endpointOf(u, u.Path), what, likelyEndpoints(u)),
		err: err,
	}
}

// hintError is a failed connect explained by endpointHint. Its message is
// the hint and what the server answered, without go-sdk's steps
// (`calling "initialize": sending "initialize": …`): the connect error
// that wraps it names the step once.
type hintError struct {
	hint string
	err  error
}

func (h *hintError) Error() string { return h.hint + ": " + withoutSteps(h.err.Error()) }

func (h *hintError) Unwrap() error { return h.err }

// withoutSteps drops go-sdk's `calling "m"` and `sending "m"` parts from a
// colon-separated error message, keeping at least its last part.
func withoutSteps(msg string) string {
	parts := strings.Split(msg, ": ")
	kept := parts[:0]
	for i, p := range parts {
		step := strings.HasPrefix(p, `calling "`) || strings.HasPrefix(p, `sending "`)
		if !step || i == len(parts)-1 {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, ": ")
}

// likelyEndpoints lists the URLs to try instead of u: /mcp under u's path,
// and at the root when u's path is not the root.
func likelyEndpoints(u *url.URL) string {
	path := strings.TrimSuffix(u.Path, "/")
	out := endpointOf(u, path+"/mcp")
	if path != "" {
		out += " or " + endpointOf(u, "/mcp")
	}
	return out
}

// endpointOf returns u with path, without credentials, query or fragment
// (which may hold secrets).
func endpointOf(u *url.URL, path string) string {
	v := url.URL{Scheme: u.Scheme, Host: u.Host, Path: path}
	if v.Path == "" {
		v.Path = "/"
	}
	return v.String()
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"

	"github.com/mcpadapter/mcpadapter"
)

// defaultBaseURL is where the OpenAI client sends requests when no base URL
// is given.
const defaultBaseURL = "https://api.openai.com/v1"

// modelEndpoint is the chat model's server as the user named it, for
// messages.
type modelEndpoint struct {
	baseURL string // the effective base URL
	model   string
	hasKey  bool
	key     string // never printed; removed from the server's messages
}

func newModelEndpoint(baseURL, model, key string) modelEndpoint {
	if baseURL == "" {
		baseURL = defaultBaseURL
	}
	return modelEndpoint{baseURL: baseURL, model: model, hasKey: key != "", key: key}
}

// keyNote is what to say before the first request when no API key is set,
// or "". A server on this machine (Ollama, vLLM, LiteLLM on loopback)
// usually needs no key, so nothing is said; any other server gets the
// requests without an Authorization header, and the user is told first.
func (e modelEndpoint) keyNote() string {
	if e.hasKey || isLoopback(e.baseURL) {
		return ""
	}
	return fmt.Sprintf("no API key is set (--api-key or $OPENAI_API_KEY): requests to %s go without one", e.baseURL)
}

// isLoopback reports whether rawURL's host is this machine: localhost or a
// loopback address.
func isLoopback(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// modelFailure is how the last request to the chat model failed.
type modelFailure struct {
	status  int    // the HTTP status, or 0 when no answer came
	message string // the server's error message, if it gave one
	err     error  // why no answer came, when status is 0
}

// modelTransport sends the chat model's requests and remembers how the
// last one failed, so that the agent can explain a failed run in plain
// words instead of the client library's.
type modelTransport struct {
	base http.RoundTripper
	mu   sync.Mutex
	last *modelFailure // nil after a success
}

func (t *modelTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		t.record(&modelFailure{err: err})
		return nil, err
	}
	if resp.StatusCode < 400 {
		t.record(nil)
		return resp, nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	t.record(&modelFailure{status: resp.StatusCode, message: apiMessage(body)})
	return resp, nil
}

func (t *modelTransport) record(f *modelFailure) {
	t.mu.Lock()
	t.last = f
	t.mu.Unlock()
}

func (t *modelTransport) failure() *modelFailure {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last
}

// apiMessage returns the message of an OpenAI error body
// ({"error": {"message": ...}}), else the body itself: its first line, cut
// to 200 characters.
func apiMessage(body []byte) string {
	var e struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	msg := string(body)
	if json.Unmarshal(body, &e) == nil && e.Error != nil && e.Error.Message != "" {
		msg = e.Error.Message
	}
	line, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	line = strings.ToValidUTF8(strings.TrimSpace(line), "\uFFFD")
	if r := []rune(line); len(r) > 200 {
		line = string(r[:199]) + "…"
	}
	return line
}

// modelError is a run that failed because the chat model's server did not
// answer or refused: the first line says so in plain words, the rest is
// the agent framework's error (shown with --verbose).
type modelError struct {
	msg string
	err error
}

func (e *modelError) Error() string { return e.msg + "\n" + e.err.Error() }
func (e *modelError) Unwrap() error { return e.err }

// explain returns err in plain words when the run failed at the chat
// model, else err unchanged.
func (e modelEndpoint) explain(ctx context.Context, err error, f *modelFailure) error {
	var te *mcpadapter.TransportError
	if err == nil || f == nil || ctx.Err() != nil || errors.As(err, &te) || errors.Is(f.err, context.Canceled) {
		return err
	}
	return &modelError{msg: e.redact(e.describe(f)), err: err}
}

// describe says what went wrong with the model's server.
func (e modelEndpoint) describe(f *modelFailure) string {
	at := e.baseURL
	if f.status == 0 {
		return fmt.Sprintf("cannot reach the model server at %s: %s; is it running, and is --base-url (or $OPENAI_BASE_URL) right?", at, netReason(f.err))
	}
	said := fmt.Sprintf("%d %s", f.status, http.StatusText(f.status))
	if f.message != "" {
		said += fmt.Sprintf(": %q", f.message)
	}
	switch {
	case f.status == http.StatusUnauthorized && !e.hasKey:
		return fmt.Sprintf("the model server at %s wants an API key and none is set (%s); pass --api-key or set $OPENAI_API_KEY", at, said)
	case f.status == http.StatusUnauthorized:
		return fmt.Sprintf("the model server at %s refused the API key (%s); check --api-key or $OPENAI_API_KEY", at, said)
	case f.status == http.StatusForbidden:
		return fmt.Sprintf("the model server at %s refused access (%s): the key may not be allowed to use model %q", at, said, e.model)
	case f.status == http.StatusNotFound:
		return fmt.Sprintf("model %q was not found at %s (%s); check --model, and --base-url (an OpenAI-compatible base URL usually ends in /v1)", e.model, at, said)
	case f.status == http.StatusTooManyRequests:
		return fmt.Sprintf("the model server at %s is limiting requests (%s): a rate limit or an exhausted quota; try again later", at, said)
	case f.status >= 500:
		return fmt.Sprintf("the model server at %s failed (%s)", at, said)
	default:
		return fmt.Sprintf("the model server at %s refused the request (%s)", at, said)
	}
}

// redact removes the API key from a message, in case a server echoes it.
func (e modelEndpoint) redact(s string) string {
	if e.key == "" {
		return s
	}
	return strings.ReplaceAll(s, e.key, "[api key]")
}

// netReason says in a few words why a request got no answer.
func netReason(err error) string {
	var dns *net.DNSError
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dns) && dns.IsNotFound:
		return fmt.Sprintf("no such host %q", dns.Name)
	case errors.As(err, &ne) && ne.Timeout():
		return "no answer in time"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

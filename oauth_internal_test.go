package mcpadapter

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"
)

// TestLoopbackFetcher: only a redirect with this flow's state ends the
// wait; the authorization server's refusal is an error with its reason.
func TestLoopbackFetcher(t *testing.T) {
	get := func(u string) int {
		resp, err := http.Get(u)
		if err != nil {
			t.Error(err)
			return 0
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		name, query, wantCode, wantErr string
	}{
		{"code", "code=c0de&iss=https%3A%2F%2Fas.example", "c0de", ""},
		{"refused", "error=access_denied&error_description=no+thanks", "", "the authorization server refused: access_denied: no thanks"},
		{"no code", "", "", "redirected back without a code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := listenRedirect(context.Background(), "", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			defer f.close()
			var stale, other atomic.Int32
			f.timeout = 10 * time.Second
			f.open = func(_ context.Context, authURL string) error {
				// A stale link and a stray path first: neither ends the wait.
				stale.Store(int32(get(f.redirectURL + "?state=old&code=x")))
				other.Store(int32(get(strings.TrimSuffix(f.redirectURL, "/callback") + "/favicon.ico")))
				go get(f.redirectURL + "?state=s1&" + tc.query)
				return nil
			}
			res, err := f.fetch(context.Background(), &auth.AuthorizationArgs{URL: "https://as.example/authorize?state=s1&" + url.Values{"x": {"y"}}.Encode()})
			if stale.Load() != http.StatusBadRequest || other.Load() != http.StatusNotFound {
				t.Errorf("stale state answered %d, other path %d", stale.Load(), other.Load())
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || res.Code != tc.wantCode || res.State != "s1" || res.Iss != "https://as.example" {
				t.Errorf("res %+v, err %v", res, err)
			}
		})
	}
}

// TestConnectDeadline: paused time does not count; stop means never.
func TestConnectDeadline(t *testing.T) {
	var fired atomic.Int64
	start := time.Now()
	d := newConnectDeadline(150*time.Millisecond, func() { fired.Store(int64(time.Since(start))) })
	time.Sleep(50 * time.Millisecond)
	resume := d.pause()
	inner := d.pause() // nested pauses
	time.Sleep(200 * time.Millisecond)
	inner()
	if fired.Load() != 0 {
		t.Fatal("fired while paused")
	}
	resume()
	resume() // twice is harmless
	deadline := time.Now().Add(2 * time.Second)
	for fired.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := time.Duration(fired.Load()); got < 340*time.Millisecond {
		t.Errorf("fired after %v; want about 150ms + the 200ms pause", got)
	}

	var late atomic.Bool
	s := newConnectDeadline(50*time.Millisecond, func() { late.Store(true) })
	r := s.pause()
	s.stop()
	r() // resuming a stopped deadline does not restart it
	time.Sleep(120 * time.Millisecond)
	if late.Load() {
		t.Error("a stopped deadline fired")
	}
}

type tokenFunc func() (*oauth2.Token, error)

func (f tokenFunc) Token() (*oauth2.Token, error) { return f() }

// TestOAuthStaleSourceNotSaved: once a sign-in has replaced a token
// source, a late refresh by the old one does not overwrite the new token.
func TestOAuthStaleSourceNotSaved(t *testing.T) {
	ctx := context.Background()
	store := NewMemoryTokenStore()
	h := newOAuthHandler(&OAuth{Store: store}, "s", "https://mcp.example/mcp", http.DefaultClient, slog.New(slog.DiscardHandler))
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

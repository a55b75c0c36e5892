package oauthflow

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
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

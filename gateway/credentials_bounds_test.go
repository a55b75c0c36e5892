package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hangingIssuer is an authorization server whose token endpoint never
// answers a token exchange: it holds each until the request ends, and
// counts those it holds. The client credentials grant it hands on to
// forward (the gateway's own token, for its listings).
type hangingIssuer struct {
	url     string
	forward atomic.Pointer[string]
	held    atomic.Int64
}

func startHangingIssuer(t *testing.T) *hangingIssuer {
	t.Helper()
	h := &hangingIssuer{}
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" && r.PostFormValue("grant_type") == "client_credentials" {
			req, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, *h.forward.Load(), strings.NewReader(r.PostForm.Encode()))
			req.Header = r.Header.Clone()
			req.ContentLength = -1
			req.Header.Del("Content-Length")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(resp.StatusCode)
			_, _ = io.Copy(w, resp.Body)
			return
		}
		if r.URL.Path == "/token" {
			h.held.Add(1)
			defer h.held.Add(-1)
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": h.url, "token_endpoint": h.url + "/token"})
	}))
	h.url = srv.URL
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	return h
}

// TestExchangeHangingIssuer: while an exchange waits on a token endpoint
// that does not answer, another request of the same principal and token
// (which waits for that exchange rather than make its own) still ends
// when its own context does; when the requests end, so do the exchanges
// (no request is left held at the token endpoint).
func TestExchangeHangingIssuer(t *testing.T) {
	hang := startHangingIssuer(t)
	e := startXchg(t, nil, func(e *xchgEnv) []gateway.Server {
		fwd := e.as.URL + "/token"
		hang.forward.Store(&fwd)
		return []gateway.Server{{Name: "slow", Target: e.as.MCPURL,
			Exchange: &mcpadapter.TokenExchange{Issuer: hang.url, ClientID: xchgClient, ClientSecret: xchgSecret, Resource: e.as.MCPURL,
				Scopes: []string{testauth.BaseScope}}}}
	})
	alice := e.token(t, "alice")
	first := e.sdkClient(t, context.Background(), alice)
	second := e.sdkClient(t, context.Background(), alice)

	long, cancelLong := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelLong()
	var wg sync.WaitGroup
	wg.Go(func() {
		_, _ = first.CallTool(long, &mcp.CallToolParams{Name: "slow_whoami", Arguments: map[string]any{}})
	})
	deadline := time.Now().Add(10 * time.Second)
	for hang.held.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if hang.held.Load() == 0 {
		t.Fatal("the gateway never asked the token endpoint")
	}
	short, cancelShort := context.WithTimeout(context.Background(), time.Second)
	defer cancelShort()
	start := time.Now()
	_, err := second.CallTool(short, &mcp.CallToolParams{Name: "slow_whoami", Arguments: map[string]any{}})
	if took := time.Since(start); err == nil || took > 4*time.Second {
		t.Errorf("a call waiting for another's exchange: %v after %v, want its own deadline's error after about 1s", err, took)
	}
	// The gateway ends its request too (the client told it the call is
	// cancelled): its audit line is written while the first call's
	// exchange still waits.
	deadline = time.Now().Add(5 * time.Second)
	for !strings.Contains(e.logs.String(), "tool=slow_whoami") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(e.logs.String(), "tool=slow_whoami") {
		t.Errorf("the gateway still handles a cancelled call that waits for another's exchange, %v after its deadline", time.Since(start)-time.Second)
	}
	cancelLong()
	wg.Wait()
	deadline = time.Now().Add(10 * time.Second)
	for hang.held.Load() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := hang.held.Load(); n != 0 {
		t.Errorf("%d requests still held at the token endpoint after every call ended", n)
	}
	// The other server is not held up.
	res, err := second.CallTool(context.Background(), &mcp.CallToolParams{Name: "up_whoami", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("up_whoami while slow's issuer hangs: %v", err)
	}
}

// TestIDJAGHangingOrGarbage: an identity provider or authorization server
// that does not answer gets the call its caller's deadline's end (and the
// gateway's request there ends with it); one that answers with text that
// is no token response gets CodeUpstreamAuth naming the server and the
// one that answered, at once.
func TestIDJAGHangingOrGarbage(t *testing.T) {
	var held atomic.Int64
	hang := func(w http.ResponseWriter, r *http.Request) {
		held.Add(1)
		defer held.Add(-1)
		<-r.Context().Done()
	}
	text := func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "<html>garbage</html>") }
	plain := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return whoami() }, nil))
	t.Cleanup(plain.Close)
	issuers := map[string]string{} // server -> the issuer that misbehaves
	e := startIDJAG(t, 0, func(e *idjagEnv) []gateway.Server {
		fwd := e.as.URL + "/token" // the gateway's own token, for its listings
		var out []gateway.Server
		for _, c := range []struct {
			name      string
			atIdP     bool
			misbehave http.HandlerFunc
		}{{"idphang", true, hang}, {"ashang", false, hang}, {"idptext", true, text}, {"astext", false, text}} {
			bad := startScriptedIssuer(t, fwd, c.misbehave)
			idp, as := e.idp.URL, bad
			if c.atIdP {
				idp, as = bad, startScriptedIssuer(t, fwd, text)
			}
			issuers[c.name] = bad
			out = append(out, gateway.Server{Name: c.name, Target: plain.URL, Exchange: &mcpadapter.TokenExchange{
				Issuer: idp, ClientID: xchgClient, ClientSecret: idpSecret, Scopes: []string{testauth.BaseScope},
				IDJAG: &mcpadapter.IDJAGExchange{AuthorizationServer: as, ClientID: xchgClient, ClientSecret: xchgSecret}}})
		}
		return out
	})
	// The scripted authorization servers take the ID-JAGs the identity
	// provider issues for them: any audience it is asked for.
	alice := e.token(t, "alice")
	cs := e.sdkClient(t, context.Background(), alice)
	for _, name := range []string{"idphang", "ashang"} {
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		start := time.Now()
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name + "_whoami", Arguments: map[string]any{}})
		cancel()
		if took := time.Since(start); err == nil || took > 4*time.Second {
			t.Errorf("%s: %v after %v, want the deadline's error after about 1.5s", name, err, took)
		}
		deadline := time.Now().Add(10 * time.Second)
		for held.Load() != 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := held.Load(); n != 0 {
			t.Errorf("%s: %d requests still held after the call ended", name, n)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, name := range []string{"idptext", "astext"} {
		start := time.Now()
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name + "_whoami", Arguments: map[string]any{}})
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%s: the error came after %v, want at once", name, took)
		}
		msg := upstreamAuthError(t, name, err, `server "`+name+`"`, "token exchange at "+issuers[name], "not a JSON token response")
		if strings.Contains(msg, alice) || strings.Contains(msg, idpSecret) {
			t.Errorf("%s: the error quotes a token or secret", name)
		}
	}
}

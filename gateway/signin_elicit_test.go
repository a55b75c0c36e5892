package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// urlUser is a handshake-era go-sdk client that declared URL elicitation,
// whose handler answers the gateway's URL questions with what answer
// does, and which records the elicitation IDs it was asked and told the
// end of.
type urlUser struct {
	cs *mcp.ClientSession

	mu       sync.Mutex
	asked    []*mcp.ElicitParams
	complete []string
	notified chan string // each notifications/elicitation/complete's ID
}

// urlClient connects a urlUser with tok; answer runs in the client's
// handler (nil: the client declares URL elicitation and takes no
// elicitation/create, so the gateway answers its calls -32042).
func (e *signInEnv) urlClient(t *testing.T, ctx context.Context, tok string, answer func(ctx context.Context, q *mcp.ElicitParams) (*mcp.ElicitResult, error)) *urlUser {
	t.Helper()
	u := &urlUser{notified: make(chan string, 16)}
	opts := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			u.mu.Lock()
			u.complete = append(u.complete, req.Params.ElicitationID)
			u.mu.Unlock()
			select {
			case u.notified <- req.Params.ElicitationID:
			default:
			}
		},
	}
	if answer != nil {
		opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			u.mu.Lock()
			u.asked = append(u.asked, req.Params)
			u.mu.Unlock()
			return answer(ctx, req.Params)
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "sdk", Version: "1"}, opts)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.url, HTTPClient: &http.Client{Transport: bearerTransport{tok}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	u.cs = cs
	return u
}

// questions returns the URL questions u was asked.
func (u *urlUser) questions() []*mcp.ElicitParams {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]*mcp.ElicitParams(nil), u.asked...)
}

// completed returns the IDs u was told the end of.
func (u *urlUser) completed() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.complete...)
}

// visit is browser.open for a goroutine other than the test's: the
// status and text of the last page, or an error.
func (b *browser) visit(u string) (int, string, error) {
	resp, err := b.hc.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), nil
}

// signInAt is browser.signIn for a goroutine other than the test's.
func (b *browser) signInAt(link string) error {
	status, text, err := b.visit(link)
	if err != nil {
		return err
	}
	if status != http.StatusOK || !strings.Contains(text, "Signed in to up") {
		return fmt.Errorf("%s's sign-in ended with %d %q", b.user, status, text)
	}
	return nil
}

// callsOf returns how many tool calls reached the server with user's
// token.
func (e *signInEnv) callsOf(user string) int {
	n := 0
	for _, r := range e.upAS.Requests() {
		if r.User == user && r.Header.Get("Mcp-Method") == "tools/call" {
			n++
		}
	}
	return n
}

// TestSignInMidCall: alice, a handshake-era go-sdk client that declared
// URL elicitation, calls a tool of a sign-in server with no token: her
// call is not failed but asks her, mid-call, with an elicitation/create
// in URL mode (the gateway's start page, an elicitation ID). mallory's
// browser opening her link signs no one in; her handler follows the link
// in her own browser, signs in and accepts; the call runs once, with her
// own token, and her session is told the sign-in completed under the ID
// of the question. bob accepts at once and signs in afterwards (as a
// real client does, the browser being out of band): his call waits for
// the sign-in and then runs with his token.
func TestSignInMidCall(t *testing.T) {
	e := startSignIn(t)
	ctx := ctxFor(t, 60*time.Second)
	mallory := newBrowser(t, "mallory")
	var refused string
	alice := e.urlClient(t, ctx, e.token(t, "alice"), func(_ context.Context, q *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		if q.Mode != "url" || q.ElicitationID == "" || !strings.HasPrefix(q.URL, e.base+"/oauth/start?t=") {
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}
		status, text, err := mallory.visit(q.URL)
		if err != nil {
			return nil, err
		}
		refused = fmt.Sprintf("%d %s", status, text)
		if err := newBrowser(t, "alice").signInAt(q.URL); err != nil {
			return nil, err
		}
		return &mcp.ElicitResult{Action: "accept"}, nil
	})
	got, err := whoamiText(ctx, alice.cs)
	if err != nil {
		t.Fatalf("alice's call: %v", err)
	}
	if u := e.userOfUp(t, got); u != "alice" {
		t.Fatalf("alice's call went with %q's token", u)
	}
	if n := e.callsOf("alice"); n != 1 {
		t.Fatalf("alice's call reached the server %d times, want 1", n)
	}
	if !strings.HasPrefix(refused, "403 ") || e.callsOf("mallory") != 0 {
		t.Fatalf("mallory's browser opening alice's link: %q, mallory's calls %d", refused, e.callsOf("mallory"))
	}
	qs := alice.questions()
	if len(qs) != 1 {
		t.Fatalf("alice was asked %d times, want once", len(qs))
	}
	select {
	case id := <-alice.notified:
		if id != qs[0].ElicitationID {
			t.Fatalf("alice was told the end of %q, asked %q", id, qs[0].ElicitationID)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("alice's session was not told that her sign-in completed")
	}

	var wg sync.WaitGroup
	defer wg.Wait()
	signedIn := make(chan error, 1)
	bob := e.urlClient(t, ctx, e.token(t, "bob"), func(_ context.Context, q *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(300 * time.Millisecond)
			signedIn <- newBrowser(t, "bob").signInAt(q.URL)
		}()
		return &mcp.ElicitResult{Action: "accept"}, nil
	})
	got, err = whoamiText(ctx, bob.cs)
	if err != nil {
		t.Fatalf("bob's call: %v", err)
	}
	if err := <-signedIn; err != nil {
		t.Fatal(err)
	}
	if u := e.userOfUp(t, got); u != "bob" || e.callsOf("bob") != 1 {
		t.Fatalf("bob's call went with %q's token, %d times", u, e.callsOf("bob"))
	}
	select {
	case id := <-bob.notified:
		if id != bob.questions()[0].ElicitationID {
			t.Fatalf("bob was told the end of %q", id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("bob's session was not told that his sign-in completed")
	}
	if c := alice.completed(); len(c) != 1 {
		t.Fatalf("alice was told of %d sign-ins (bob's told her?): %v", len(c), c)
	}
	logs := e.logs.String()
	for _, s := range []string{got[len("Bearer "):], upSecret} {
		if strings.Contains(logs, s) {
			t.Fatalf("the logs hold a secret or token: %q", s)
		}
	}
}

// TestSignInMidCallDeclined: carol declines the question, dave cancels
// it: each call ends with an error result saying the user did not sign
// in, and nothing reached the server for them.
func TestSignInMidCallDeclined(t *testing.T) {
	e := startSignIn(t)
	ctx := ctxFor(t, 60*time.Second)
	for user, action := range map[string]string{"carol": "decline", "dave": "cancel"} {
		c := e.urlClient(t, ctx, e.token(t, user), func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: action}, nil
		})
		res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "up_whoami", Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("%s: %v", user, err)
		}
		text := ""
		if len(res.Content) == 1 {
			text = res.Content[0].(*mcp.TextContent).Text
		}
		if !res.IsError || !strings.Contains(text, "did not sign in to up ("+action+")") {
			t.Fatalf("%s %sd: want an error result saying so, got %+v %q", user, action, res, text)
		}
		if len(c.questions()) != 1 || e.callsOf(user) != 0 {
			t.Fatalf("%s: asked %d times, %d calls reached the server", user, len(c.questions()), e.callsOf(user))
		}
	}
}

// TestSignInMidCallUserGone: erin accepts and never signs in. Her call
// waits until its own timeout (the client's context) ends it; the
// gateway then has no request in flight (Shutdown returns at once) and
// no goroutine of the wait left.
func TestSignInMidCallUserGone(t *testing.T) {
	e := startSignIn(t)
	ctx := ctxFor(t, 60*time.Second)
	erin := e.urlClient(t, ctx, e.token(t, "erin"), func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept"}, nil
	})
	if _, err := erin.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "up_whoami"}); err == nil {
		t.Fatal("warm-up: erin's prompt came without a sign-in")
	}
	base := settledGoroutines(0)
	cctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := erin.cs.CallTool(cctx, &mcp.CallToolParams{Name: "up_whoami", Arguments: map[string]any{}})
	if err == nil || time.Since(start) < time.Second {
		t.Fatalf("erin's call should wait for her sign-in until its timeout: %v after %v", err, time.Since(start))
	}
	if n := settledGoroutines(base); n > base {
		t.Fatalf("%d goroutines after erin's call ended, %d before", n, base)
	}
	if e.callsOf("erin") != 0 {
		t.Fatal("erin's call reached the server")
	}
	sctx, scancel := context.WithTimeout(ctx, 3*time.Second)
	defer scancel()
	if err := e.gw.Shutdown(sctx); err != nil {
		t.Fatalf("Shutdown after erin's call ended: %v", err)
	}
}

// TestSignInMidCallUnanswered: frank's client holds the question to sign
// in open and never answers it. The question ends with the link's
// lifetime (SignInOptions.TTL, 1s here), not with the client's own
// timeout: his call ends with an error saying so, nothing reached the
// server. gina's question, open when a reload removes the server, ends
// at once with the server unavailable.
func TestSignInMidCallUnanswered(t *testing.T) {
	e := startSignIn(t, func(o *gateway.Options) { o.SignIn.TTL = time.Second })
	ctx := ctxFor(t, 60*time.Second)
	release := make(chan struct{})
	defer close(release)
	asked := make(chan struct{}, 4)
	hold := func(ctx context.Context, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		asked <- struct{}{}
		select {
		case <-ctx.Done():
		case <-release:
		}
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	frank := e.urlClient(t, ctx, e.token(t, "frank"), hold)
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	start := time.Now()
	_, err := frank.cs.CallTool(cctx, &mcp.CallToolParams{Name: "up_whoami", Arguments: map[string]any{}})
	took := time.Since(start)
	if err == nil || took > 8*time.Second || !strings.Contains(err.Error(), "lifetime") {
		t.Fatalf("frank's unanswered question: want an error at the link's expiry, got %v after %v", err, took)
	}
	if e.callsOf("frank") != 0 || len(asked) != 1 {
		t.Fatalf("frank's call reached the server %d times, asked %d times", e.callsOf("frank"), len(asked))
	}
	<-asked

	gina := e.urlClient(t, ctx, e.token(t, "gina"), hold)
	done := make(chan error, 1)
	go func() {
		_, err := gina.cs.CallTool(cctx, &mcp.CallToolParams{Name: "up_whoami", Arguments: map[string]any{}})
		done <- err
	}()
	select {
	case <-asked:
	case <-time.After(10 * time.Second):
		t.Fatal("gina was not asked")
	}
	other := mcp.NewServer(&mcp.Implementation{Name: "other", Version: "1"}, nil)
	if err := e.gw.Reload(ctx, []gateway.Server{{Name: "other", Target: other}}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "unavailable") {
			t.Fatalf("gina's call when the server was removed: %v", err)
		}
	case <-time.After(700 * time.Millisecond):
		t.Fatal("gina's question outlived the server's removal")
	}
}

// TestSignInMidCallParkTimeout: the question to sign in put to a client
// mid-call waits no longer than the gateway's ParkTimeout when that is
// shorter than the link's lifetime, as every question the gateway puts
// to a client does.
func TestSignInMidCallParkTimeout(t *testing.T) {
	e := startSignIn(t, func(o *gateway.Options) { o.ParkTimeout = time.Second })
	ctx := ctxFor(t, 60*time.Second)
	release := make(chan struct{})
	defer close(release)
	hold := func(ctx context.Context, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		select {
		case <-ctx.Done():
		case <-release:
		}
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	frank := e.urlClient(t, ctx, e.token(t, "frank"), hold)
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	start := time.Now()
	_, err := frank.cs.CallTool(cctx, &mcp.CallToolParams{Name: "up_whoami", Arguments: map[string]any{}})
	if took := time.Since(start); err == nil || took > 8*time.Second || !strings.Contains(err.Error(), "park timeout") {
		t.Fatalf("frank's unanswered question: want an error at the park timeout (1s), got %v after %v", err, took)
	}
}

// TestSignInMidCallPrincipals: alice has two calls waiting for her
// sign-in, from two sessions, and bob one. bob's sign-in runs his call
// only: alice's go on waiting (her token version, not anyone's, wakes
// them). alice's sign-in at the first link runs both her calls, each
// once, with her token; each of her sessions is told the end of its own
// question, bob's session of his only.
func TestSignInMidCallPrincipals(t *testing.T) {
	e := startSignIn(t)
	ctx := ctxFor(t, 60*time.Second)
	questions := make(chan *mcp.ElicitParams, 8)
	accept := func(_ context.Context, q *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		questions <- q
		return &mcp.ElicitResult{Action: "accept"}, nil
	}
	type outcome struct {
		who, text string
		err       error
	}
	results := make(chan outcome, 3)
	call := func(who string, u *urlUser) {
		text, err := whoamiText(ctx, u.cs)
		results <- outcome{who, text, err}
	}
	next := func() *mcp.ElicitParams {
		t.Helper()
		select {
		case q := <-questions:
			return q
		case <-time.After(10 * time.Second):
			t.Fatal("no question")
			return nil
		}
	}
	alice1 := e.urlClient(t, ctx, e.token(t, "alice"), accept)
	alice2 := e.urlClient(t, ctx, e.token(t, "alice"), accept)
	bob := e.urlClient(t, ctx, e.token(t, "bob"), accept)
	go call("alice", alice1)
	aliceLink := next().URL
	go call("alice", alice2)
	next()
	go call("bob", bob)
	newBrowser(t, "bob").signIn(t, next().URL)
	select {
	case r := <-results:
		if r.err != nil || r.who != "bob" || e.userOfUp(t, r.text) != "bob" {
			t.Fatalf("after bob's sign-in: %s's call ended: %v", r.who, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("bob's call did not run after his sign-in")
	}
	select {
	case r := <-results:
		t.Fatalf("bob's sign-in ended %s's call: %v", r.who, r.err)
	case <-time.After(3 * signInPollTest):
	}
	if e.callsOf("alice") != 0 {
		t.Fatal("bob's sign-in made alice's calls")
	}
	newBrowser(t, "alice").signIn(t, aliceLink)
	for range 2 {
		select {
		case r := <-results:
			if r.err != nil || r.who != "alice" || e.userOfUp(t, r.text) != "alice" {
				t.Fatalf("after alice's sign-in: %s's call: %v", r.who, r.err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("alice's calls did not both run after her sign-in")
		}
	}
	if n := e.callsOf("alice"); n != 2 {
		t.Fatalf("alice's two calls reached the server %d times", n)
	}
	for name, u := range map[string]*urlUser{"alice1": alice1, "alice2": alice2, "bob": bob} {
		qs := u.questions()
		deadline := time.Now().Add(5 * time.Second)
		for len(u.completed()) == 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if c := u.completed(); len(qs) != 1 || len(c) != 1 || c[0] != qs[0].ElicitationID {
			t.Fatalf("%s: asked %d, told the end of %v", name, len(qs), c)
		}
	}
}

// TestSignInMidCallRefusedAfter: the server answers 401 to every token
// of hank's, also after each sign-in. His call asks him twice (he signs in
// each time), then ends with the -32042 question: it does not ask on,
// and no sign-in wakes it twice.
func TestSignInMidCallRefusedAfter(t *testing.T) {
	e := startSignIn(t)
	ctx := ctxFor(t, 60*time.Second)
	e.upAS.RefuseUser("hank", true)
	hank := e.urlClient(t, ctx, e.token(t, "hank"), func(_ context.Context, q *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		if err := newBrowser(t, "hank").signInAt(q.URL); err != nil {
			return nil, err
		}
		return &mcp.ElicitResult{Action: "accept"}, nil
	})
	_, err := hank.cs.CallTool(ctx, &mcp.CallToolParams{Name: "up_whoami", Arguments: map[string]any{}})
	signInURLError(t, err)
	if n := len(hank.questions()); n != 2 {
		t.Fatalf("hank was asked %d times mid-call, want 2", n)
	}
}

// signInPollTest is how often the gateway reads the token store while a
// call waits for a sign-in (signInPoll).
const signInPollTest = 500 * time.Millisecond

// settledGoroutines waits until at most want goroutines run (want 0:
// until the count stops changing), and returns how many do.
func settledGoroutines(want int) int {
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		m := runtime.NumGoroutine()
		if (want > 0 && m <= want) || (want == 0 && m == n) {
			return m
		}
		n = m
	}
	return n
}

// TestSignInNotified: a client that declared URL elicitation but refuses
// the gateway's elicitation/create gets the -32042 error instead; when
// its principal signs in at the link, its session is told the sign-in
// completed, under the question's ID. bob's sign-in, completed first,
// tells alice's session nothing, and alice's link opened in bob's
// browser signs no one in.
func TestSignInNotified(t *testing.T) {
	e := startSignIn(t)
	ctx := ctxFor(t, 60*time.Second)
	ask := func(u *urlUser) (string, string) {
		_, err := whoamiText(ctx, u.cs)
		return signInURLError(t, err)
	}
	alice := e.urlClient(t, ctx, e.token(t, "alice"), nil)
	bob := e.urlClient(t, ctx, e.token(t, "bob"), nil)
	aliceLink, aliceID := ask(alice)
	bobLink, bobID := ask(bob)
	if status, _ := newBrowser(t, "bob").open(t, aliceLink); status != http.StatusForbidden {
		t.Fatalf("bob's browser opening alice's link: %d", status)
	}
	newBrowser(t, "bob").signIn(t, bobLink)
	select {
	case id := <-bob.notified:
		if id != bobID {
			t.Fatalf("bob was told the end of %q, asked %q", id, bobID)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("bob's session was not told that his sign-in completed")
	}
	newBrowser(t, "alice").signIn(t, aliceLink)
	select {
	case id := <-alice.notified:
		if id != aliceID {
			t.Fatalf("alice was told the end of %q, asked %q", id, aliceID)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("alice's session was not told that her sign-in completed")
	}
	if c := alice.completed(); len(c) != 1 {
		t.Fatalf("alice was told of %v, want her own sign-in only", c)
	}
	got, err := whoamiText(ctx, alice.cs)
	if err != nil || e.userOfUp(t, got) != "alice" || e.callsOf("alice") != 1 {
		t.Fatalf("alice's call after signing in: %v (%d calls)", err, e.callsOf("alice"))
	}
}

// ctxFor returns a context ending after d or with the test.
func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestSignInPrompt: a prompt of a sign-in server, for a principal with no
// token, gets the question too (not a refused connection): -32042 for a
// client that declared URL elicitation, whose session is told when the
// sign-in completes, after which the prompt comes with the user's own
// token; -32017 with the URL in its data for any other client.
func TestSignInPrompt(t *testing.T) {
	e := startSignIn(t)
	ctx := ctxFor(t, 60*time.Second)
	carol := e.urlClient(t, ctx, e.token(t, "carol"), nil)
	_, err := carol.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "up_whoami"})
	link, id := signInURLError(t, err)
	newBrowser(t, "carol").signIn(t, link)
	select {
	case got := <-carol.notified:
		if got != id {
			t.Fatalf("carol was told the end of %q, asked %q", got, id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("carol's session was not told that her sign-in completed")
	}
	res, err := carol.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "up_whoami"})
	if err != nil || len(res.Messages) != 1 {
		t.Fatalf("carol's prompt after signing in: %v", err)
	}
	if u := e.userOfUp(t, res.Messages[0].Content.(*mcp.TextContent).Text); u != "carol" {
		t.Fatalf("carol's prompt went with %q's token", u)
	}
	_, err = e.sdkClient(t, ctx, e.token(t, "dave"), false).GetPrompt(ctx, &mcp.GetPromptParams{Name: "up_whoami"})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != gateway.CodeSignInRequired || !strings.Contains(string(we.Data), e.base+"/oauth/start?t=") {
		t.Fatalf("a client without URL elicitation: want CodeSignInRequired with the URL, got %v", err)
	}
}

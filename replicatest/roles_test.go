package replicatest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cloudwego/eino/schema"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/eino"
	"github.com/mcpadapter/mcpadapter/elicitation"
)

// replica is one process's agents and stores.
type replica struct {
	cfg            childConfig
	s              *stores
	modern, legacy *eino.Agent
	close          []func()
}

// runRole does cfg.Role and reports what it saw.
func runRole(ctx context.Context, cfg childConfig) (rep childReport) {
	s, err := openStores(ctx, cfg.Store, cfg.DB)
	if err != nil {
		return childReport{Err: err.Error()}
	}
	defer s.close()
	r := &replica{cfg: cfg, s: s}
	defer func() {
		for _, f := range r.close {
			f()
		}
	}()
	if r.modern, err = r.agent(ctx, cfg.Modern, s.cache); err == nil {
		r.legacy, err = r.agent(ctx, cfg.Legacy, nil)
	}
	// Tell the parent we are up, and wait for it (it may stop the store).
	fmt.Println("ready")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil {
		return childReport{Err: err.Error()}
	}
	switch cfg.Role {
	case "first":
		rep.Modern = drain(r.modern.Query(ctx, "cp-modern", "book a table"))
		rep.Legacy = drain(r.legacy.Query(ctx, "cp-legacy", "book a table"))
		rep.Opened, err = r.signInAndRefresh(ctx)
	case "down":
		var it outcome
		it, err = resume(ctx, r.modern, "cp-modern", cfg.Modern1)
		if err == nil && it.Err != "" {
			err = errors.New(it.Err)
		}
		if err != nil {
			rep.ResumeErr, err = err.Error(), nil
		}
	case "second":
		if rep.Modern, err = resume(ctx, r.modern, "cp-modern", cfg.Modern1); err == nil {
			rep.Legacy, err = resume(ctx, r.legacy, "cp-legacy", cfg.Legacy1)
		}
		if err != nil {
			return childReport{Err: err.Error()}
		}
		rep.Opened, err = r.useStoredToken(ctx)
	}
	if err != nil {
		rep.Tokens = err.Error()
	}
	return rep
}

// agent builds an agent on the tools of the server at url, with the
// shared checkpoint store and, if cache is set, the shared cache.
func (r *replica) agent(ctx context.Context, url string, cache mcpadapter.CacheStore) (*eino.Agent, error) {
	opts := &mcpadapter.ClientOptions{ConnectTimeout: 10 * time.Second}
	if cache != nil {
		opts.Cache = &mcpadapter.CacheConfig{Store: cache}
	}
	c, err := mcpadapter.NewClient(url, opts)
	if err != nil {
		return nil, err
	}
	a, err := mcpadapter.New(c, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
	if err != nil {
		return nil, err
	}
	r.close = append(r.close, func() { a.Close() })
	tools, err := a.Tools(ctx)
	if err != nil {
		return nil, err
	}
	return eino.NewAgent(ctx, &scripted{rounds: [][]schema.ToolCall{bookRound()}}, tools, eino.AgentConfig{Store: r.s.checkpoints})
}

// resume answers the first replica's interrupts: three guests.
func resume(ctx context.Context, a *eino.Agent, checkpoint string, first outcome) (outcome, error) {
	answers := map[string]*elicitation.Resume{}
	for _, p := range first.Interrupts {
		resp := map[string]elicitation.Response{}
		for _, q := range p.Interrupt.Requests {
			resp[q.Key] = elicitation.Response{Action: elicitation.Accept, Content: map[string]any{"guests": 3}}
		}
		answers[p.ID] = &elicitation.Resume{Responses: resp}
	}
	it, err := a.Resume(ctx, checkpoint, answers)
	if err != nil {
		return outcome{}, err
	}
	return drain(it), nil
}

// browser plays the user: it follows the authorization URL, and the
// authorization server redirects back to the client.
type browser struct {
	mu     sync.Mutex
	opened int
	refuse bool // fail instead: the user must not be asked
}

func (b *browser) open(ctx context.Context, authURL string) error {
	b.mu.Lock()
	b.opened++
	b.mu.Unlock()
	if b.refuse {
		return errors.New("this replica must not ask the user to sign in")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

// echo calls the echo tool of the OAuth-protected server with a new
// client on the shared token store.
func (r *replica) echo(ctx context.Context, b *browser) error {
	c, err := mcpadapter.NewClient(r.cfg.Auth, &mcpadapter.ClientOptions{
		Auth: &mcpadapter.OAuth{OpenURL: b.open, Store: r.s.tokens}, ConnectTimeout: 10 * time.Second})
	if err != nil {
		return err
	}
	a, err := mcpadapter.New(c, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	tools, err := a.Tools(ctx)
	if err != nil {
		return err
	}
	for _, t := range tools {
		if t.Name == "echo" {
			res, err := t.Call(ctx, []byte(`{"text":"hi"}`))
			if err != nil {
				return err
			}
			if res.Text() != "hi" {
				return fmt.Errorf("echo said %q", res.Text())
			}
			return nil
		}
	}
	return errors.New("no echo tool")
}

// signInAndRefresh signs in, then, the stored token having expired (as
// after an hour), refreshes it with a new client.
func (r *replica) signInAndRefresh(ctx context.Context) (int, error) {
	b := &browser{}
	if err := r.echo(ctx, b); err != nil {
		return b.opened, fmt.Errorf("signing in: %w", err)
	}
	st, err := r.s.tokens.Load(ctx, r.cfg.Auth)
	if err != nil || st == nil {
		return b.opened, fmt.Errorf("no stored token after the sign-in: %v", err)
	}
	st.Token.Expiry = time.Now().Add(-time.Minute)
	if err := r.s.tokens.Save(ctx, r.cfg.Auth, st); err != nil {
		return b.opened, err
	}
	if err := r.echo(ctx, b); err != nil {
		return b.opened, fmt.Errorf("refreshing: %w", err)
	}
	return b.opened, nil
}

// useStoredToken calls the protected server without asking the user.
func (r *replica) useStoredToken(ctx context.Context) (int, error) {
	b := &browser{refuse: true}
	err := r.echo(ctx, b)
	if err != nil && strings.Contains(err.Error(), "must not ask") {
		err = fmt.Errorf("the stored token was not used: %w", err)
	}
	return b.opened, err
}

package replicatest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestPrincipalsNeverCross runs many goroutines of four principals through
// one Client (and a second Client sharing its cache store, as a replica
// would) of a server that answers each user differently — its own tools,
// schemas, instructions and sessions tied to the user — for each store of
// the response cache (memory, Redis, PostgreSQL) and each protocol era:
// tool lists, calls, search, Connect's instructions and (handshake era)
// interrupted calls resumed with the user's answer, and resumes tried by
// another principal. Not one result may be another principal's.
func TestPrincipalsNeverCross(t *testing.T) {
	for _, kind := range []string{"memory", "redis", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			var store mcpadapter.CacheStore
			if kind != "memory" {
				db := startDB(t, kind)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				s, err := openStores(ctx, kind, db.URL)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(s.close)
				store = s.cache
			}
			for _, stateless := range []bool{false, true} {
				name := "handshake"
				if stateless {
					name = "2026-07-28"
				}
				t.Run(name, func(t *testing.T) {
					crossPrincipals(t, store, stateless)
				})
			}
		})
	}
}

// crossPrincipals is one run of TestPrincipalsNeverCross.
func crossPrincipals(t *testing.T, store mcpadapter.CacheStore, stateless bool) {
	srv := testserver.ServePerUser(t, testserver.PerUserOptions{Stateless: stateless, CacheTTLMs: 60000, OmitCacheScope: true})
	auth := mcpadapter.PrincipalToken(func(_ context.Context, p string) (string, error) {
		if p == "" {
			return "", errors.New("no request is made for no one")
		}
		return testserver.PerUserToken(p), nil
	})
	var adapters []*mcpadapter.Adapter
	for range 2 {
		cache := &mcpadapter.CacheConfig{Store: store}
		if store == nil {
			cache = &mcpadapter.CacheConfig{}
		}
		c, err := mcpadapter.NewClient(srv.URL, &mcpadapter.ClientOptions{Auth: auth, Cache: cache, MaxSessions: 4})
		if err != nil {
			t.Fatal(err)
		}
		a, err := mcpadapter.New(c, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Close() })
		adapters = append(adapters, a)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	principals := []string{"alice", "bob", "carol", "dave"}
	var (
		mu   sync.Mutex
		errs []string
		ops  = map[string]int{}
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		if len(errs) < 20 {
			errs = append(errs, fmt.Sprintf(format, args...))
		}
		mu.Unlock()
	}
	count := func(op string) {
		mu.Lock()
		ops[op]++
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for w := range 12 {
		wg.Go(func() {
			p := principals[w%len(principals)]
			other := principals[(w+1)%len(principals)]
			a := adapters[w%len(adapters)]
			pctx := mcpadapter.WithCallIdentity(ctx, &mcpadapter.CallIdentity{Principal: p})
			for i := range 8 {
				if ctx.Err() != nil {
					return
				}
				switch (w + i) % 5 {
				case 0:
					tools, err := a.Tools(pctx)
					if err == nil {
						err = ownTools(p, tools)
					}
					if err != nil {
						fail("%s: Tools: %v", p, err)
					}
					count("list")
				case 1:
					for _, tool := range []string{"whoami", "query"} {
						res, err := a.Group().Clients()[0].CallTool(pctx, tool, json.RawMessage(`{}`), nil)
						want := map[string]string{"whoami": p, "query": p + " queried"}[tool]
						if err != nil || res.IsError || res.Text() != want {
							fail("%s: %s: %v %v", p, tool, err, res)
						}
						count("call")
					}
				case 2:
					hits, err := a.Search(pctx, "secret tool private databases query", 10)
					var found []*mcpadapter.Tool
					for _, h := range hits {
						found = append(found, h.Tool)
					}
					if err == nil {
						err = ownTools(p, found)
					}
					if err != nil {
						fail("%s: Search: %v", p, err)
					}
					count("search")
				case 3:
					info, err := a.Group().Clients()[0].Connect(pctx)
					if err != nil || info.Instructions != "instructions for "+p {
						fail("%s: Connect: %v %v", p, err, info)
					}
					count("connect")
				case 4:
					if stateless {
						continue // a stateless server cannot ask the user
					}
					confirm(ctx, a, p, other, fail)
					count("interrupt")
				}
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("not done within the bound: %v", ctx.Err())
	}
	for _, e := range errs {
		t.Error(e)
	}
	t.Logf("operations: %v", ops)
}

// confirm calls the confirm tool for p, has other try to resume it (it
// must be refused), then resumes it with p's answer.
func confirm(ctx context.Context, a *mcpadapter.Adapter, p, other string, fail func(string, ...any)) {
	pctx := mcpadapter.WithCallIdentity(ctx, &mcpadapter.CallIdentity{Principal: p})
	octx := mcpadapter.WithCallIdentity(ctx, &mcpadapter.CallIdentity{Principal: other})
	tools, err := a.Tools(pctx)
	if err != nil {
		fail("%s: Tools: %v", p, err)
		return
	}
	var tool *mcpadapter.Tool
	for _, tl := range tools {
		if tl.Name == "confirm" {
			tool = tl
		}
	}
	if tool == nil {
		fail("%s: no confirm tool", p)
		return
	}
	res, err := tool.Call(pctx, json.RawMessage(`{}`))
	for range 10 {
		var ir *mcpadapter.InputRequiredError
		if !errors.As(err, &ir) {
			break
		}
		pending := ir.Pending
		if !pending.Asks() {
			res, err = tool.Resume(pctx, pending, &elicitation.Resume{})
			continue
		}
		q := pending.Requests[0]
		if want := "confirm for " + p + "?"; q.Message != want {
			fail("%s was asked %q", p, q.Message)
		}
		answer := &elicitation.Resume{Responses: map[string]elicitation.Response{q.Key: {Action: elicitation.Accept, Content: map[string]any{"ok": true}}}}
		var denied *mcpadapter.ResumeDeniedError
		if r, err := tool.Resume(octx, pending, answer); !errors.As(err, &denied) {
			fail("%s resumed %s's call: %v %v", other, p, r, err)
		}
		res, err = tool.Resume(pctx, pending, answer)
	}
	// Another goroutine of p, on the same connection, may have made a
	// call meanwhile: p moved on, and p's question was closed, as
	// documented. That is p's own outcome, not another principal's.
	var ae *mcpadapter.AnsweredError
	if errors.As(err, &ae) && strings.Contains(ae.Closed, "moved on") {
		return
	}
	if err != nil || res.IsError || res.Text() != p+" confirmed" {
		fail("%s: confirm: %v %v", p, err, res)
	}
}

// ownTools reports a tool list of p that holds anything of another
// principal's.
func ownTools(p string, tools []*mcpadapter.Tool) error {
	var own, query bool
	for _, tool := range tools {
		switch {
		case tool.Name == p+"_private":
			own = true
		case strings.HasSuffix(tool.Name, "_private"):
			return fmt.Errorf("%s was shown %s (%q)", p, tool.Name, tool.Description)
		case tool.Name == "query":
			query = true
			if want := `"` + p + `-payroll-db"`; !strings.Contains(string(tool.InputSchema), want) {
				return fmt.Errorf("%s's query schema is %s", p, tool.InputSchema)
			}
		}
	}
	if !own || !query {
		return fmt.Errorf("%s's tools miss %s_private or query: %d tools", p, p, len(tools))
	}
	return nil
}

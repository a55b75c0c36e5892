package mcpadapter_test

//lint:file-ignore SA1019 logging lives in the handshake era, which these servers speak too

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// notifyCalls is how many calls each cell of the ordering tests makes.
const notifyCalls = 200

// requestBound bounds one request of TestNotificationsBeforeFeatureAnswersReachLogHandler.
const requestBound = 30 * time.Second

// notifyTargets are the servers of the ordering tests: a go-sdk server with
// the notify tool (a log message and a progress report immediately before
// its answer) of each era over every transport.
func notifyTargets(t *testing.T) map[string]any {
	opts := func(era testserver.Era) testserver.Options {
		return testserver.Options{Era: era, Notify: true}
	}
	bin := testserver.Build(t)
	return map[string]any{
		"stdio-modern":     mcpadapter.Command{Path: bin, Args: []string{"-era", "modern", "-notify"}},
		"stdio-legacy":     mcpadapter.Command{Path: bin, Args: []string{"-era", "legacy", "-notify"}},
		"http-modern":      testserver.ServeStreamable(t, testserver.New(opts(testserver.Modern)), testserver.Stateless()),
		"http-legacy":      testserver.ServeStreamable(t, testserver.New(opts(testserver.Legacy))),
		"sse-legacy":       testserver.ServeSSE(t, testserver.New(opts(testserver.Legacy))),
		"inprocess-modern": testserver.New(opts(testserver.Modern)),
		"inprocess-legacy": testserver.New(opts(testserver.Legacy)),
	}
}

// TestNotificationsBeforeAnswerReachCallbacks: a server's log message or
// progress report sent immediately before its answer to a tools/call, as
// the call's first notification, has reached the Client's LogHandler or
// the call's Progress callback when the call returns, every time, over
// every transport and in both eras.
func TestNotificationsBeforeAnswerReachCallbacks(t *testing.T) {
	t.Parallel()
	for name, target := range notifyTargets(t) {
		for _, kind := range []string{"log", "progress"} {
			t.Run(name+"/"+kind, func(t *testing.T) {
				ctx := testCtx(t)
				var mu sync.Mutex
				logged := map[string]bool{}
				c, err := mcpadapter.NewClient(target, &mcpadapter.ClientOptions{
					LogHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
						mu.Lock()
						logged[fmt.Sprint(req.Params.Data)] = true
						mu.Unlock()
					},
				})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				var meta map[string]any
				if kind == "log" {
					sess, err := c.Session(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if v := sess.InitializeResult().ProtocolVersion; v >= "2026-07-28" {
						meta = map[string]any{mcp.MetaKeyLogLevel: "debug"}
					} else if err := sess.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
						t.Fatal(err)
					}
				}
				missed := 0
				for i := range notifyCalls {
					text := fmt.Sprintf("%s %d", kind, i)
					args, _ := json.Marshal(testserver.NotifyIn{Text: text, Log: kind == "log", Progress: kind == "progress"})
					var reported []string
					opts := &mcpadapter.CallOptions{Meta: meta}
					if kind == "progress" {
						opts.Progress = func(p mcpadapter.Progress) {
							mu.Lock()
							reported = append(reported, p.Message)
							mu.Unlock()
						}
					}
					res, err := c.CallTool(ctx, "notify", args, opts)
					if err != nil || res.Text() != text {
						t.Fatalf("call %d: %v %+v", i, err, res)
					}
					mu.Lock()
					got := logged[text]
					if kind == "progress" {
						got = len(reported) == 1 && reported[0] == text
					}
					mu.Unlock()
					if !got {
						missed++
					}
				}
				if missed > 0 {
					t.Errorf("%d of %d calls returned before their %s callback ran", missed, notifyCalls, kind)
				}
			})
		}
	}
}

// TestEverythingProgressBeforeAnswer: server-everything (TypeScript SDK)
// sends the only progress report of trigger-long-running-operation with
// one step of no duration immediately before its answer; the call's
// Progress callback has run when the call returns, every time, over each
// of its transports.
func TestEverythingProgressBeforeAnswer(t *testing.T) {
	t.Parallel()
	for name, target := range everythingTransports() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			c, err := mcpadapter.NewClient(target(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			missed := 0
			for i := range notifyCalls {
				var mu sync.Mutex
				var reported []float64
				opts := &mcpadapter.CallOptions{Progress: func(p mcpadapter.Progress) {
					mu.Lock()
					reported = append(reported, p.Progress)
					mu.Unlock()
				}}
				res, err := c.CallTool(ctx, "trigger-long-running-operation", json.RawMessage(`{"duration":0,"steps":1}`), opts)
				if err != nil || res.IsError {
					t.Fatalf("call %d: %v %+v", i, err, res)
				}
				mu.Lock()
				if len(reported) != 1 || reported[0] != 1 {
					missed++
				}
				mu.Unlock()
			}
			if missed > 0 {
				t.Errorf("%d of %d calls returned before their progress callback ran", missed, notifyCalls)
			}
		})
	}
}

// TestNotificationsBeforeFeatureAnswersReachLogHandler: a handshake-era
// server's log message sent immediately before its answer to a
// resources/read, a prompts/get or a completion/complete has reached the
// Client's LogHandler when the request returns, every time, over every
// transport: made through the Client, and made on go-sdk's session that
// Client.Session returns.
func TestNotificationsBeforeFeatureAnswersReachLogHandler(t *testing.T) {
	t.Parallel()
	requests := map[string]func(ctx context.Context, c *mcpadapter.Client, text string) (string, error){
		"resources/read": func(ctx context.Context, c *mcpadapter.Client, text string) (string, error) {
			res, err := c.ReadResource(ctx, testserver.NotifyURIPrefix+text)
			if err != nil || len(res.Contents) != 1 {
				return "", fmt.Errorf("%v %+v", err, res)
			}
			return res.Contents[0].Text, nil
		},
		"prompts/get": func(ctx context.Context, c *mcpadapter.Client, text string) (string, error) {
			res, err := c.GetPrompt(ctx, "notify", map[string]string{"text": text})
			if err != nil || len(res.Messages) != 1 {
				return "", fmt.Errorf("%v %+v", err, res)
			}
			tc, _ := res.Messages[0].Content.(*mcp.TextContent)
			if tc == nil {
				return "", fmt.Errorf("prompt content %T", res.Messages[0].Content)
			}
			return tc.Text, nil
		},
		"completion/complete": func(ctx context.Context, c *mcpadapter.Client, text string) (string, error) {
			res, err := c.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "notify"},
				Argument: mcp.CompleteParamsArgument{Name: "text", Value: text}})
			if err != nil || len(res.Completion.Values) != 1 {
				return "", fmt.Errorf("%v %+v", err, res)
			}
			return res.Completion.Values[0], nil
		},
		// The same requests made on go-sdk's session that Client.Session
		// returns, as a program relaying them does (the gateway).
		"session resources/read": func(ctx context.Context, c *mcpadapter.Client, text string) (string, error) {
			sess, err := c.Session(ctx)
			if err != nil {
				return "", err
			}
			res, err := sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: testserver.NotifyURIPrefix + text})
			if err != nil || len(res.Contents) != 1 {
				return "", fmt.Errorf("%v %+v", err, res)
			}
			return res.Contents[0].Text, nil
		},
		"session prompts/get": func(ctx context.Context, c *mcpadapter.Client, text string) (string, error) {
			sess, err := c.Session(ctx)
			if err != nil {
				return "", err
			}
			res, err := sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: "notify", Arguments: map[string]string{"text": text}})
			if err != nil || len(res.Messages) != 1 {
				return "", fmt.Errorf("%v %+v", err, res)
			}
			tc, _ := res.Messages[0].Content.(*mcp.TextContent)
			if tc == nil {
				return "", fmt.Errorf("prompt content %T", res.Messages[0].Content)
			}
			return tc.Text, nil
		},
		"session completion/complete": func(ctx context.Context, c *mcpadapter.Client, text string) (string, error) {
			sess, err := c.Session(ctx)
			if err != nil {
				return "", err
			}
			res, err := sess.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "notify"},
				Argument: mcp.CompleteParamsArgument{Name: "text", Value: text}})
			if err != nil || len(res.Completion.Values) != 1 {
				return "", fmt.Errorf("%v %+v", err, res)
			}
			return res.Completion.Values[0], nil
		},
	}
	for name, target := range notifyTargets(t) {
		if !strings.HasSuffix(name, "-legacy") {
			continue // a 2026-07-28 server logs for a request that asks for a level in its _meta
		}
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t)
			var mu sync.Mutex
			logged := map[string]bool{}
			c, err := mcpadapter.NewClient(target, &mcpadapter.ClientOptions{
				LogHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
					mu.Lock()
					logged[fmt.Sprint(req.Params.Data)] = true
					mu.Unlock()
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			sess, err := c.Session(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := sess.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
				t.Fatal(err)
			}
			for method, request := range requests {
				missed := 0
				for i := range notifyCalls {
					text := fmt.Sprintf("%s-%d", strings.NewReplacer("/", "-", " ", "-").Replace(method), i)
					// Each request has a bound of its own: the cell's
					// requests (seven methods, notifyCalls each) share no
					// budget, so a loaded machine makes the cell slow, and
					// only a request that does not end fails it.
					rctx, cancel := context.WithTimeout(context.Background(), requestBound)
					start := time.Now()
					got, err := request(rctx, c, text)
					cancel()
					if err != nil || got != text {
						t.Fatalf("%s %d (ended after %v): %v %q", method, i, time.Since(start).Round(time.Millisecond), err, got)
					}
					mu.Lock()
					if !logged[text] {
						missed++
					}
					mu.Unlock()
				}
				if missed > 0 {
					t.Errorf("%s: %d of %d requests returned before their log message reached the LogHandler", method, missed, notifyCalls)
				}
			}
		})
	}
}

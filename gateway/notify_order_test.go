package gateway

//lint:file-ignore SA1019 logging lives in the handshake era, which these clients and servers speak too

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

// notifyCalls is how many calls each cell of the ordering test makes.
const notifyCalls = 200

// heard is what a test client's handlers received: log data and progress
// messages, by text.
type heard struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (h *heard) add(s string) {
	h.mu.Lock()
	h.seen[s] = true
	h.mu.Unlock()
}

// missing returns how many of want have not been heard, waiting until
// all have or until the deadline: a go-sdk client hands notifications to
// their handlers apart from the answers, so they may come a little after.
func (h *heard) missing(want []string, deadline time.Time) int {
	for {
		n := 0
		h.mu.Lock()
		for _, s := range want {
			if !h.seen[s] {
				n++
			}
		}
		h.mu.Unlock()
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestNotifyOrderThroughGateway: a server's log message or progress report
// sent immediately before its answer to a tools/call, as the call's first
// notification, reaches the gateway's client every time: servers of both
// eras over stdio and streamable HTTP, clients of 2025-11-25 and
// 2026-07-28.
func TestNotifyOrderThroughGateway(t *testing.T) {
	bin := testserver.Build(t)
	backends := map[string]Server{
		"stdio-modern": {Name: "up", Target: mcpadapter.Command{Path: bin, Args: []string{"-era", "modern", "-notify"}}},
		"stdio-legacy": {Name: "up", Target: mcpadapter.Command{Path: bin, Args: []string{"-era", "legacy", "-notify"}}},
		"http-modern": {Name: "up", Target: testserver.StartStreamable(t,
			testserver.New(testserver.Options{Notify: true}), testserver.Stateless()).URL},
		"http-legacy": {Name: "up", Target: testserver.StartStreamable(t,
			testserver.New(testserver.Options{Era: testserver.Legacy, Notify: true})).URL},
	}
	for name, srv := range backends {
		_, url := startGateway(t, []Server{srv}, nil)
		for _, v := range []string{v1125, v0728} {
			for _, kind := range []string{"log", "progress"} {
				t.Run(name+"/"+v+"/"+kind, func(t *testing.T) {
					notifyOrderCell(t, url, v, kind)
				})
			}
		}
	}
}

// notifyOrderCell makes notifyCalls calls of the notify tool through the
// gateway at url, as a client of version v, each sending one notification
// of kind (log, progress) before its answer, and checks that every one
// reached the client.
func notifyOrderCell(t *testing.T, url, v, kind string) {
	ctx := testCtx(t, 2*time.Minute)
	h := &heard{seen: map[string]bool{}}
	cs := connect(t, url, v, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			h.add(fmt.Sprint(r.Params.Data))
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			h.add(r.Params.Message)
		},
	})
	if kind == "log" && v < v0728 {
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
	}
	want := make([]string, 0, notifyCalls)
	for i := range notifyCalls {
		text := fmt.Sprintf("%s %s %d", v, kind, i)
		args, _ := json.Marshal(testserver.NotifyIn{Text: text, Log: kind == "log", Progress: kind == "progress"})
		p := &mcp.CallToolParams{Name: "notify", Arguments: json.RawMessage(args)}
		if kind == "progress" {
			p.SetProgressToken(fmt.Sprintf("tok-%d", i))
		} else if v >= v0728 {
			p.Meta = mcp.Meta{mcp.MetaKeyLogLevel: "debug"}
		}
		res, err := cs.CallTool(ctx, p)
		if err != nil || texts(res) != text {
			t.Fatalf("call %d: %v %q", i, err, texts(res))
		}
		want = append(want, text)
	}
	if n := h.missing(want, time.Now().Add(5*time.Second)); n > 0 {
		t.Errorf("%d of %d calls' %s notifications never reached the client", n, notifyCalls, kind)
	}
}

// TestNotifyOrderOfFeaturesThroughGateway: a handshake-era server's log
// message sent immediately before its answer to a resources/read, a
// prompts/get or a completion/complete reaches the gateway's client every
// time (the gateway answers after passing it on): stdio and streamable
// HTTP servers, clients of 2025-11-25 and 2026-07-28.
func TestNotifyOrderOfFeaturesThroughGateway(t *testing.T) {
	bin := testserver.Build(t)
	backends := map[string]Server{
		"stdio-legacy": {Name: "up", Target: mcpadapter.Command{Path: bin, Args: []string{"-era", "legacy", "-notify"}}},
		"http-legacy": {Name: "up", Target: testserver.StartStreamable(t,
			testserver.New(testserver.Options{Era: testserver.Legacy, Notify: true})).URL},
	}
	for name, srv := range backends {
		_, url := startGateway(t, []Server{srv}, nil)
		for _, v := range []string{v1125, v0728} {
			t.Run(name+"/"+v, func(t *testing.T) {
				featureOrderCell(t, url, v)
			})
		}
	}
}

// featureOrderCell makes notifyCalls requests of each feature method
// through the gateway at url, as a client of version v, each answered
// after one log message, and checks that every message reached the
// client.
func featureOrderCell(t *testing.T, url, v string) {
	ctx := testCtx(t, 2*time.Minute)
	h := &heard{seen: map[string]bool{}}
	cs := connect(t, url, v, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			h.add(fmt.Sprint(r.Params.Data))
		},
	})
	var meta mcp.Meta
	if v < v0728 {
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
	} else {
		meta = mcp.Meta{mcp.MetaKeyLogLevel: "debug"}
	}
	for method, request := range featureRequests(meta) {
		want := make([]string, 0, notifyCalls)
		for i := range notifyCalls {
			text := fmt.Sprintf("%s-%s-%d", v, strings.ReplaceAll(method, "/", "-"), i)
			got, err := request(ctx, cs, text)
			if err != nil || got != text {
				t.Fatalf("%s %d: %v %q", method, i, err, got)
			}
			want = append(want, text)
		}
		if n := h.missing(want, time.Now().Add(5*time.Second)); n > 0 {
			t.Errorf("%s: %d of %d requests' log messages never reached the client", method, n, notifyCalls)
		}
	}
}

// featureRequests returns, by method, a resources/read, a prompts/get and
// a completion/complete of the test server's notify resource and prompt
// (see testserver.NotifyURIPrefix) made on cs with _meta meta: each
// answers text, after a log message of text.
func featureRequests(meta mcp.Meta) map[string]func(ctx context.Context, cs *mcp.ClientSession, text string) (string, error) {
	return map[string]func(ctx context.Context, cs *mcp.ClientSession, text string) (string, error){
		"resources/read": func(ctx context.Context, cs *mcp.ClientSession, text string) (string, error) {
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{Meta: meta, URI: testserver.NotifyURIPrefix + text})
			if err != nil || len(res.Contents) != 1 {
				return "", fmt.Errorf("%v %+v", err, res)
			}
			return res.Contents[0].Text, nil
		},
		"prompts/get": func(ctx context.Context, cs *mcp.ClientSession, text string) (string, error) {
			res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Meta: meta, Name: "notify", Arguments: map[string]string{"text": text}})
			if err != nil || len(res.Messages) != 1 {
				return "", fmt.Errorf("%v %+v", err, res)
			}
			tc, _ := res.Messages[0].Content.(*mcp.TextContent)
			if tc == nil {
				return "", fmt.Errorf("prompt content %T", res.Messages[0].Content)
			}
			return tc.Text, nil
		},
		"completion/complete": func(ctx context.Context, cs *mcp.ClientSession, text string) (string, error) {
			res, err := cs.Complete(ctx, &mcp.CompleteParams{Meta: meta, Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "notify"},
				Argument: mcp.CompleteParamsArgument{Name: "text", Value: text}})
			if err != nil || len(res.Completion.Values) != 1 {
				return "", fmt.Errorf("%v %+v", err, res)
			}
			return res.Completion.Values[0], nil
		},
	}
}

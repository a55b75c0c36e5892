package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// policySecret is what a Policy that breaks holds in its panic: the
// token of the policy service it asks.
const policySecret = "pol-7f3a9c2e1d5b8a4f6e0c"

// panicAll is a Policy that panics whatever it is asked, with an error
// naming its service's URL and token, as a client of a policy service
// that fails may.
type panicAll struct{}

func (panicAll) Allow(context.Context, string, string, string, string) bool {
	panic(fmt.Errorf("policy service https://policy.example/check?access_token=%s: 502", policySecret))
}

// TestPolicyPanicsEverywhere: a Policy that panics on every question,
// with a secret in its panic, asked by every method a client sends that
// the Policy governs (tools, resources, resource templates, prompts:
// lists, calls, reads, gets), on the session fast path and on go-sdk's:
// the process goes on, each request is answered (an internal error, or a
// list without what the Policy was asked about), no answer holds the
// secret, the panics are logged without it, and the session still
// answers a ping.
func TestPolicyPanicsEverywhere(t *testing.T) {
	srv := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy, WhoamiResource: true}))
	for _, slow := range []bool{false, true} {
		t.Run(map[bool]string{false: "fast", true: "go-sdk"}[slow], func(t *testing.T) {
			logs := &lockedBuffer{}
			_, url := startGateway(t, []Server{{Name: "s", Target: srv.URL}}, &Options{
				Policy: panicAll{}, slowPathOnly: slow,
				Logger: slog.New(slog.NewTextHandler(logs, nil)),
			})
			cs := connect(t, url, v1125, nil)
			ctx := testCtx(t, 30*time.Second)
			check := func(what string, res any, err error) {
				t.Helper()
				text := fmt.Sprintf("%v %+v", err, res)
				if strings.Contains(text, policySecret) {
					t.Errorf("%s: the answer holds the Policy's secret: %.500s", what, text)
				}
				t.Logf("%s: %.200s", what, text)
			}
			tools, err := cs.ListTools(ctx, nil)
			check("tools/list", tools, err)
			if err == nil && len(tools.Tools) > 0 {
				t.Errorf("tools/list listed %d tools the Policy was not able to allow", len(tools.Tools))
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
			check("tools/call", res, err)
			if err == nil && !res.IsError {
				t.Errorf("tools/call was run though the Policy panicked: %+v", res)
			}
			rl, err := cs.ListResources(ctx, nil)
			check("resources/list", rl, err)
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: testserver.ResourceWhoami})
			check("resources/read", rr, err)
			if err == nil {
				t.Errorf("resources/read was answered though the Policy panicked: %+v", rr)
			}
			rt, err := cs.ListResourceTemplates(ctx, nil)
			check("resources/templates/list", rt, err)
			pl, err := cs.ListPrompts(ctx, nil)
			check("prompts/list", pl, err)
			pg, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "notify", Arguments: map[string]string{"text": "x"}})
			check("prompts/get", pg, err)
			if err == nil {
				t.Errorf("prompts/get was answered though the Policy panicked: %+v", pg)
			}
			if err := cs.Ping(ctx, nil); err != nil {
				t.Fatalf("a ping after the panics: %v", err)
			}
			l := logs.String()
			if !strings.Contains(l, "recovered from a panic") {
				t.Errorf("no panic was logged:\n%.2000s", l)
			}
			if strings.Contains(l, policySecret) {
				i := strings.Index(l, policySecret)
				t.Errorf("the log holds the Policy's secret: %q", l[max(0, i-300):i+30])
			}
		})
	}
}

// endPanics is a mcpadapter.ServerSessionTelemetry whose
// EndServerSession panics; ended counts its calls.
type endPanics struct{ ended atomic.Int32 }

func (*endPanics) StartServerOperation(ctx context.Context, _ mcpadapter.ServerOperation) (context.Context, func(mcpadapter.ServerOperationResult)) {
	return ctx, func(mcpadapter.ServerOperationResult) {}
}

func (*endPanics) InjectMeta(context.Context, map[string]any) {}

func (e *endPanics) EndServerSession(context.Context, mcpadapter.ServerSessionEnd) {
	e.ended.Add(1)
	panic("the telemetry broke ending a session")
}

// TestTelemetryEndSessionPanics: Options.Telemetry's EndServerSession,
// which the gateway calls on a goroutine of its own once a session's
// connection has ended, panics: the process goes on (unrecovered, the
// panic ends the test binary), and the gateway serves the next session.
func TestTelemetryEndSessionPanics(t *testing.T) {
	srv := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	tel := &endPanics{}
	_, url := startGateway(t, []Server{{Name: "s", Target: srv.URL}}, &Options{Telemetry: tel})
	for i := range 2 {
		cs := connect(t, url, v1125, nil)
		if err := cs.Ping(testCtx(t, 10*time.Second), nil); err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		_ = cs.Close()
		for deadline := time.Now().Add(20 * time.Second); tel.ended.Load() < int32(i+1); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("EndServerSession was called %d times for %d sessions ended", tel.ended.Load(), i+1)
			}
		}
	}
	cs := connect(t, url, v1125, nil)
	if err := cs.Ping(testCtx(t, 10*time.Second), nil); err != nil {
		t.Fatalf("a session after the panics: %v", err)
	}
}

// renewPanics is the gateway's own LimitStore with a Renew that panics,
// as a caller's store with a bug may; renewed counts its calls.
type renewPanics struct {
	LimitStore
	renewed atomic.Int32
}

func (r *renewPanics) Renew(context.Context, string, string, time.Duration) (bool, error) {
	r.renewed.Add(1)
	panic("the limit store broke renewing a lease")
}

// TestLimitStoreRenewPanics: the LimitStore panics renewing the lease of
// a long call's concurrency slot, which the gateway does on a goroutine
// of its own every third of the lease's TTL: the process goes on
// (unrecovered, the panic ends the test binary), the call runs to its
// end and is answered, and the next call runs.
func TestLimitStoreRenewPanics(t *testing.T) {
	e := newLimitEnv(t)
	store := &renewPanics{LimitStore: newMemoryLimits()}
	url := e.replica(&Limits{Rules: []LimitRule{{Name: "one", Per: "principal", Concurrent: 1}}, LeaseTTL: 300 * time.Millisecond, Store: store})
	ctx := testCtx(t, 30*time.Second)
	alice := e.client(url, "alice")
	held := make(chan error, 1)
	go func() {
		_, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "hold"})
		held <- err
	}()
	select {
	case <-e.started:
	case <-ctx.Done():
		t.Fatal("the hold did not start")
	}
	for deadline := time.Now().Add(20 * time.Second); store.renewed.Load() < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the lease was renewed %d times", store.renewed.Load())
		}
	}
	e.finish <- struct{}{}
	if err := within(t, held, 20*time.Second, "the long call"); err != nil {
		t.Fatalf("the long call: %v", err)
	}
	if we := call(t, ctx, alice, "echo"); we != nil {
		t.Fatalf("the next call: %v", we)
	}
}

// beatPanics is a MemoryTaskStore whose SaveTask panics, once broken is
// set, for this replica's liveness record, which the gateway writes on a
// goroutine of its own every taskBeat; panics counts the panics.
type beatPanics struct {
	*MemoryTaskStore
	broken atomic.Bool
	panics atomic.Int32
}

func (b *beatPanics) SaveTask(ctx context.Context, key string, rec []byte, ttl time.Duration) error {
	if b.broken.Load() && strings.Contains(key, "replica") {
		b.panics.Add(1)
		panic("the task store broke writing a liveness record")
	}
	return b.MemoryTaskStore.SaveTask(ctx, key, rec, ttl)
}

// TestTaskStoreBeatPanics: the task store panics writing this replica's
// liveness record: the process goes on (unrecovered, the panic ends the
// test binary), the beats go on, and a call is answered.
func TestTaskStoreBeatPanics(t *testing.T) {
	srv := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	store := &beatPanics{MemoryTaskStore: &MemoryTaskStore{}}
	_, url := startGateway(t, []Server{{Name: "s", Target: srv.URL}}, &Options{Tasks: &TaskOptions{Store: store}})
	store.broken.Store(true)
	for deadline := time.Now().Add(20 * time.Second); store.panics.Load() < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the liveness record was written %d times", store.panics.Load())
		}
	}
	store.broken.Store(false)
	cs := connect(t, url, v1125, nil)
	res, err := cs.CallTool(testCtx(t, 10*time.Second), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "after"}})
	if err != nil || !strings.Contains(texts(res), "after") {
		t.Fatalf("a call after the panics: %v %+v", err, res)
	}
}

package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/mcpadapter/mcpadapter/internal/streamable"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestChooseFastPath: whether a connection has a fast path is decided from
// its facts alone, once: the switch, the transport, the trace (HTTP only)
// and a negotiated version.
func TestChooseFastPath(t *testing.T) {
	for _, c := range []struct {
		name                 string
		fast, trace, isStdio bool
		version              string
		want                 bool
	}{
		{"stdio", true, false, true, "2025-11-25", true},
		{"stdio traced", true, true, true, "2026-07-28", true},
		{"stdio switched off", false, false, true, "2025-11-25", false},
		{"http", true, false, false, "2026-07-28", true},
		{"http traced", true, true, false, "2025-11-25", false},
		{"http switched off", false, false, false, "2025-11-25", false},
		{"no version", true, false, true, "", false},
	} {
		s := &Session{e: New(Config{FastPath: c.fast, Trace: c.trace}), version: c.version}
		if c.isStdio {
			s.stdio = &stdio.Conn{}
		} else {
			s.fast.http = &streamable.Conn{}
		}
		s.chooseFastPath()
		if want := c.want && FastPathBuilt; s.FastPath() != want {
			t.Errorf("%s: fast path %v, want %v", c.name, s.FastPath(), want)
		}
	}
}

// traceIDs records the ids of the tools/call requests a client sends.
type traceIDs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *traceIDs) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(p)
}

var callID = regexp.MustCompile(`\\"id\\":(\d+),[^{}]*\\"method\\":\\"tools/call\\"`)

// ids returns the ids of the tools/call requests sent since the last
// call, as "fast" (the fast path's id range) or "sdk".
func (r *traceIDs) ids() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, m := range callID.FindAllStringSubmatch(r.buf.String(), -1) {
		if len(m[1]) >= len("100000000000000") {
			out = append(out, "fast")
		} else {
			out = append(out, "sdk")
		}
	}
	r.buf.Reset()
	return out
}

// TestCallToolPath: on a stdio connection with a fast path, a plain call
// takes it, also with a _meta of its own; a call a feature marked ViaSDK,
// or whose params carry a progress token, goes through go-sdk; on a
// 2026-07-28 connection the first plain call goes through go-sdk, which
// the fast path learns its _meta from.
func TestCallToolPath(t *testing.T) {
	if !FastPathBuilt {
		t.Skip("built with -tags mcpadapter_nofastpath: no fast path by design")
	}
	server := testserver.Build(t)
	for _, era := range []string{testserver.Legacy.String(), testserver.Modern.String()} {
		t.Run(era, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var trace traceIDs
			obs := wire.NewObserver("s", slog.New(slog.NewJSONHandler(&trace, &slog.HandlerOptions{Level: slog.LevelDebug})))
			sdk := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
			sdk.AddReceivingMiddleware(BacklogMiddleware)
			e := New(Config{
				Name: "s", Kind: Stdio, SDK: sdk, Observer: obs, FastPath: true,
				ConnectTimeout: 30 * time.Second, ProbeTimeout: 5 * time.Second, CloseGrace: time.Second,
				Stdio: stdio.Transport{Path: server, Args: []string{"-era", era, "-minimal"}, Observer: obs},
			})
			defer e.Close()
			s, err := e.Session(ctx)
			if err != nil {
				t.Fatal(err)
			}
			call := func(c Call) {
				t.Helper()
				res, _, err := s.CallTool(ctx, c)
				if err != nil || res.IsError {
					t.Fatalf("%+v: %v %+v", c, err, res)
				}
			}
			plain := func() Call {
				return Call{Params: &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"x"}`)}}
			}
			want := []string{"fast"}
			if era == testserver.Modern.String() {
				want = []string{"sdk"} // learns go-sdk's _meta
			}
			call(plain())
			if got := trace.ids(); !equal(got, want) {
				t.Fatalf("first plain call: %v, want %v", got, want)
			}
			call(plain())
			if got := trace.ids(); !equal(got, []string{"fast"}) {
				t.Fatalf("plain call: %v, want [fast]", got)
			}
			via := plain()
			via.ViaSDK = true
			call(via)
			if got := trace.ids(); !equal(got, []string{"sdk"}) {
				t.Fatalf("ViaSDK call: %v, want [sdk]", got)
			}
			meta := plain()
			meta.Params.Meta = mcp.Meta{"k": "v"}
			call(meta)
			if got := trace.ids(); !equal(got, []string{"fast"}) {
				t.Fatalf("call with _meta: %v, want [fast]", got)
			}
			progress := plain()
			progress.Params.Meta = mcp.Meta{"k": "v", "progressToken": "p-1"}
			call(progress)
			if got := trace.ids(); !equal(got, []string{"sdk"}) {
				t.Fatalf("call with a progress token: %v, want [sdk]", got)
			}
		})
	}
}

// TestCallToolLearnsMetaPerEntry: on a 2026-07-28 connection, calls
// whose _meta gives one of the entries go-sdk adds (a relayed client's
// capabilities) teach the fast path the others, and take it from the
// second call on, sending the call's entries over go-sdk's; a plain call
// goes through go-sdk until it has learnt the entry they gave.
func TestCallToolLearnsMetaPerEntry(t *testing.T) {
	if !FastPathBuilt {
		t.Skip("built with -tags mcpadapter_nofastpath: no fast path by design")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var trace traceIDs
	obs := wire.NewObserver("s", slog.New(slog.NewJSONHandler(&trace, &slog.HandlerOptions{Level: slog.LevelDebug})))
	sdk := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	sdk.AddReceivingMiddleware(BacklogMiddleware)
	e := New(Config{
		Name: "s", Kind: Stdio, SDK: sdk, Observer: obs, FastPath: true,
		ConnectTimeout: 30 * time.Second, ProbeTimeout: 5 * time.Second, CloseGrace: time.Second,
		Stdio: stdio.Transport{Path: testserver.Build(t), Args: []string{"-era", testserver.Modern.String(), "-minimal"}, Observer: obs},
	})
	defer e.Close()
	s, err := e.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	call := func(meta mcp.Meta, want string) string {
		t.Helper()
		res, _, err := s.CallTool(ctx, Call{Params: &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"x"}`), Meta: meta}})
		if err != nil || res.IsError {
			t.Fatalf("%v: %v %+v", meta, err, res)
		}
		trace.mu.Lock()
		sent := trace.buf.String()
		trace.mu.Unlock()
		if got := trace.ids(); !equal(got, []string{want}) {
			t.Fatalf("call with _meta %v: %v, want [%s]", meta, got, want)
		}
		return sent
	}
	relayed := func() mcp.Meta {
		return mcp.Meta{mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}}, "k": "v"}
	}
	call(relayed(), "sdk")
	sent := call(relayed(), "fast")
	for _, want := range []string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, `\"elicitation\":{}`, `\"k\":\"v\"`} {
		if !strings.Contains(sent, want) {
			t.Errorf("the fast path's request lacks %s: %s", want, sent)
		}
	}
	call(nil, "sdk") // learns go-sdk's own capabilities
	call(nil, "fast")
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSlots: nil slots bound nothing; a full set makes a call wait until
// a release, and a call whose context ends while it waits gets an error
// that wraps the cause and says it was not sent.
func TestSlots(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	if NewSlots(0) != nil {
		t.Fatal("NewSlots(0) is not nil")
	}
	var none Slots
	for range 3 {
		if _, err := none.Take(t.Context(), log, "t"); err != nil {
			t.Fatal(err)
		}
	}
	s := NewSlots(1)
	release, err := s.Take(t.Context(), log, "t")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.Take(ctx, log, "t"); err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "not sent: still waiting for one of the 1 call slots") {
		t.Fatalf("Take on full slots = %v, want the context's end, not sent", err)
	}
	got := make(chan error, 1)
	go func() {
		r, err := s.Take(t.Context(), log, "t")
		if err == nil {
			r()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("Take on full slots returned %v before a release", err)
	case <-time.After(20 * time.Millisecond):
	}
	release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}

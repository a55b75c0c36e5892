package gateway

//lint:file-ignore SA1019 logging lives in the handshake era, which these clients and servers speak too

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// meetWait bounds how long a call of the whisper server waits for the
// other call of its round.
const meetWait = 5 * time.Second

// whisperIn is the input of the whisper tool.
type whisperIn struct {
	User  string `json:"user"`
	Round int    `json:"round"`
	Logs  int    `json:"logs"`
	// Cross, on alice's call, sends her secret on bob's call's stream
	// and on the session's standalone stream (GET) instead of her own;
	// on bob's, keeps his stream open until she has.
	Cross bool `json:"cross,omitempty"`
}

// whisperServer is a handshake-era go-sdk server whose tool whisper
// holds the two calls of a round (alice's and bob's) until both have
// arrived, then has each send its log messages, which carry a secret of
// its user, on its own request's stream (the request's context), and
// answer at once: the answers of both are read at the same moment.
type whisperServer struct {
	srv *mcp.Server

	mu       sync.Mutex
	rounds   map[int]*meeting
	sessions map[*mcp.ServerSession]bool
	met      atomic.Int64 // rounds whose two calls met
	// onList, when set, runs in the server's tools/list handler with the
	// request's context.
	onList atomic.Pointer[func(context.Context, *mcp.ServerSession)]
}

// meeting is one round's calls at the server.
type meeting struct {
	all     chan struct{} // closed when both calls have arrived
	crossed chan struct{} // closed when alice's cross call has logged
	ctx     map[string]context.Context
}

func newWhisperServer() *whisperServer {
	w := &whisperServer{rounds: map[int]*meeting{}, sessions: map[*mcp.ServerSession]bool{}}
	w.srv = mcp.NewServer(&mcp.Implementation{Name: "whisper", Version: "1"},
		&mcp.ServerOptions{SupportedProtocolVersions: testserver.LegacyVersions})
	w.srv.AddTool(&mcp.Tool{Name: "whisper", Description: "Log a user's secret, then answer.",
		InputSchema: json.RawMessage(`{"type":"object"}`)}, w.whisper)
	w.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if f := w.onList.Load(); method == "tools/list" && f != nil {
				if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
					(*f)(ctx, ss)
				}
			}
			return next(ctx, method, req)
		}
	})
	return w
}

// secret is the data of a log message of user's call in round, number i.
func secret(user string, round, i int) string {
	return fmt.Sprintf("secret-%s r%d #%d", user, round, i)
}

func (w *whisperServer) meet(ctx context.Context, in whisperIn, ss *mcp.ServerSession) (*meeting, bool) {
	w.mu.Lock()
	w.sessions[ss] = true
	m := w.rounds[in.Round]
	if m == nil {
		m = &meeting{all: make(chan struct{}), crossed: make(chan struct{}), ctx: map[string]context.Context{}}
		w.rounds[in.Round] = m
	}
	m.ctx[in.User] = ctx
	if len(m.ctx) == 2 {
		close(m.all)
		w.met.Add(1)
	}
	w.mu.Unlock()
	select {
	case <-m.all:
		return m, true
	case <-time.After(meetWait):
		return m, false
	case <-ctx.Done():
		return m, false
	}
}

func (w *whisperServer) whisper(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in whisperIn
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
		return nil, err
	}
	m, met := w.meet(ctx, in, req.Session)
	logOn := func(ctx context.Context, data string) {
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: data})
	}
	switch {
	case in.Cross && met && in.User == "alice":
		w.mu.Lock()
		bob := m.ctx["bob"]
		w.mu.Unlock()
		for i := range in.Logs {
			logOn(bob, secret(in.User, in.Round, i)+" on bob's stream")
			logOn(context.Background(), secret(in.User, in.Round, i)+" on the GET stream")
		}
		close(m.crossed)
	case in.Cross && met && in.User == "bob":
		for i := range in.Logs {
			logOn(ctx, secret(in.User, in.Round, i))
		}
		// Bob's stream stays open until alice's call has logged on it.
		select {
		case <-m.crossed:
		case <-time.After(meetWait):
		case <-ctx.Done():
		}
	default:
		for i := range in.Logs {
			logOn(ctx, secret(in.User, in.Round, i))
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.User}}}, nil
}

// logBook records the data of the log messages a client session heard.
type logBook struct {
	mu   sync.Mutex
	data []string
}

func (b *logBook) handler(_ context.Context, r *mcp.LoggingMessageRequest) {
	b.mu.Lock()
	b.data = append(b.data, fmt.Sprint(r.Params.Data))
	b.mu.Unlock()
}

// count returns how many of the messages heard contain s.
func (b *logBook) count(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, d := range b.data {
		if strings.Contains(d, s) {
			n++
		}
	}
	return n
}

// waitCount waits (bounded) until b heard at least n messages containing
// s, and returns how many it heard.
func (b *logBook) waitCount(s string, n int) int {
	for deadline := time.Now().Add(10 * time.Second); b.count(s) < n && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	return b.count(s)
}

// whisperClients starts the gateway in front of a whisper server over
// streamable HTTP and connects alice, bob and carol, clients that cannot
// be asked (so that their calls run side by side on the server's one
// connection), whose log messages go to their books.
func whisperClients(t *testing.T, w *whisperServer) (g *Gateway, sessions map[string]*mcp.ClientSession, books map[string]*logBook) {
	url := testserver.StartStreamable(t, w.srv).URL
	g, gurl := startGateway(t, []Server{{Name: "up", Target: url}}, nil)
	ctx := testCtx(t, 30*time.Second)
	sessions, books = map[string]*mcp.ClientSession{}, map[string]*logBook{}
	for _, user := range []string{"alice", "bob", "carol"} {
		books[user] = &logBook{}
		cs := connect(t, gurl, v1125, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{},
			LoggingMessageHandler: books[user].handler})
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
		sessions[user] = cs
	}
	return g, sessions, books
}

// whisperRound makes alice's and bob's calls of round at once.
func whisperRound(ctx context.Context, sessions map[string]*mcp.ClientSession, round, logs int, cross bool) error {
	errs := make(chan error, 2)
	for _, user := range []string{"alice", "bob"} {
		go func() {
			res, err := sessions[user].CallTool(ctx, &mcp.CallToolParams{Name: "whisper",
				Arguments: whisperIn{User: user, Round: round, Logs: logs, Cross: cross}})
			if err == nil && texts(res) != user {
				err = fmt.Errorf("%s's answer %q", user, texts(res))
			}
			errs <- err
		}()
	}
	var first error
	for range 2 {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// streamLogRounds is how many rounds TestLogAttributionStreams makes.
const streamLogRounds = 200

// TestLogAttributionStreams: alice's and bob's calls are in flight on
// the gateway's one streamable HTTP connection to a handshake-era
// server at once, and the server logs each call's secret on that call's
// request stream and answers both at the same moment, for many rounds:
// each session gets exactly its own log messages, every one of them, and
// none of the other's; carol, with no call, gets none.
func TestLogAttributionStreams(t *testing.T) {
	w := newWhisperServer()
	_, sessions, books := whisperClients(t, w)
	ctx := testCtx(t, 3*time.Minute)
	const logs = 3
	for round := range streamLogRounds {
		if err := whisperRound(ctx, sessions, round, logs, false); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	if n := w.met.Load(); n != streamLogRounds {
		t.Errorf("the two calls met at the server in %d of %d rounds", n, streamLogRounds)
	}
	if n := len(w.sessions); n != 1 {
		t.Errorf("the calls ran on %d server sessions, want the one shared connection", n)
	}
	want := streamLogRounds * logs
	for _, user := range []string{"alice", "bob"} {
		other := map[string]string{"alice": "bob", "bob": "alice"}[user]
		heard := books[user].waitCount("secret-"+user, want)
		crossed := books[user].count("secret-" + other)
		t.Logf("%s heard %d of the %d log messages of %s calls and %d of %s's", user, heard, want, user+"'s", crossed, other)
		if heard != want {
			t.Errorf("%s heard %d of the %d log messages of %s calls", user, heard, want, user+"'s")
		}
		if crossed != 0 {
			t.Errorf("%s heard %d of %s's log messages", user, crossed, other)
		}
	}
	if n := books["carol"].count("secret-"); n != 0 {
		t.Errorf("carol, with no call in flight, heard %d log messages", n)
	}
}

// TestLogAttributionStreamsHostile: a server that sends alice's secret on
// bob's call's request stream and on the session's standalone stream
// (GET) while both calls are in flight on the gateway's connection. A
// message on a call's stream goes to that call's session (the server
// chose to tell bob, as it could in his result), never to another; one on
// the standalone stream is attributed by the order of the connection's
// messages (to alice, to bob, or to no session); carol, with no call in
// flight on the connection, never gets any. A log
// message on the stream of the gateway's own request (tools/list, while
// alice's call is the only one in flight) goes to no session.
func TestLogAttributionStreamsHostile(t *testing.T) {
	w := newWhisperServer()
	g, sessions, books := whisperClients(t, w)
	ctx := testCtx(t, 2*time.Minute)
	const rounds, logs = 20, 2
	for round := range rounds {
		if err := whisperRound(ctx, sessions, round, logs, true); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	if n := w.met.Load(); n != rounds {
		t.Errorf("the two calls met at the server in %d of %d rounds", n, rounds)
	}
	onBob := books["bob"].waitCount("on bob's stream", rounds*logs)
	if onBob != rounds*logs {
		t.Errorf("bob heard %d of the %d messages sent on his calls' streams", onBob, rounds*logs)
	}
	if n := books["alice"].count("on bob's stream"); n != 0 {
		t.Errorf("alice heard %d of the messages sent on bob's calls' streams", n)
	}
	// The standalone stream's messages are attributed by the order of
	// the connection's messages: to alice or to bob while only that one's
	// call may have been in flight when the server sent them, else to no
	// session.
	t.Logf("of the %d messages on the standalone stream, alice heard %d, bob %d", rounds*logs,
		books["alice"].count("on the GET stream"), books["bob"].count("on the GET stream"))
	if n := books["carol"].count("secret-"); n != 0 {
		t.Errorf("carol, with no call in flight, heard %d log messages", n)
	}

	// The gateway's own tools/list, while alice's call alone is in
	// flight: the server logs on the listing's stream.
	u := g.servers()[0]
	listed := make(chan struct{})
	var armed atomic.Bool
	var once sync.Once
	f := func(ctx context.Context, ss *mcp.ServerSession) {
		if armed.Load() {
			_ = ss.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "secret-list on the tools/list stream"})
			once.Do(func() { close(listed) })
		}
	}
	w.onList.Store(&f)
	w.srv.AddTool(&mcp.Tool{Name: "wait", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-listed:
			case <-time.After(meetWait):
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "waited"}}}, nil
		})
	waitUntil(t, "the gateway listed the new tool", func() bool {
		return slices.Contains(toolNames(t, sessions["carol"]), "wait")
	})
	done := make(chan error, 1)
	go func() {
		_, err := sessions["alice"].CallTool(ctx, &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}})
		done <- err
	}()
	waitUntil(t, "alice's call in flight", func() bool { return !u.lane.idle() })
	armed.Store(true)
	// A change of the list has the gateway list the tools again.
	w.srv.AddTool(&mcp.Tool{Name: "other", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case <-listed:
	default:
		t.Fatal("the gateway did not list the tools while alice's call was in flight")
	}
	time.Sleep(200 * time.Millisecond) // the message is relayed, if it is
	if n := books["alice"].count("secret-list"); n != 0 {
		t.Errorf("alice heard the log message of the gateway's own tools/list %d times", n)
	}
}

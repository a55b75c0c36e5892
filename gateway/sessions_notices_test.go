package gateway

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// noticeHub carries the notices of noticeStores in the process, as a
// store's channel does: each subscription gets every notice sent while
// it lasts (one it has no room for is lost).
type noticeHub struct {
	mu     sync.Mutex
	subs   map[chan string]bool
	refuse bool // SubscribeSessions fails
	made   int  // subscriptions made
}

func newNoticeHub() *noticeHub { return &noticeHub{subs: make(map[chan string]bool)} }

// send gives id to every subscription, waiting up to wait for room.
func (h *noticeHub) send(id string, wait time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- id:
			continue
		default:
		}
		if wait > 0 {
			select {
			case ch <- id:
			case <-time.After(wait):
			}
		}
	}
}

// drop ends subscription ch, or every one when ch is nil: the store's
// connection dropped.
func (h *noticeHub) drop(ch chan string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.subs {
		if ch == nil || c == ch {
			delete(h.subs, c)
			close(c)
		}
	}
}

// state returns the live subscriptions and those made.
func (h *noticeHub) state() (live, made int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs), h.made
}

func (h *noticeHub) setRefuse(v bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.refuse = v
}

// noticeStore is a faultStore with notices through a hub.
type noticeStore struct {
	*faultStore
	hub *noticeHub
}

func (n *noticeStore) NotifySession(_ context.Context, id string) error {
	n.hub.send(id, 0)
	return nil
}

func (n *noticeStore) SubscribeSessions(ctx context.Context) (<-chan string, error) {
	h := n.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.refuse {
		return nil, errFault
	}
	ch := make(chan string, 64)
	h.subs[ch] = true
	h.made++
	context.AfterFunc(ctx, func() { h.drop(ch) })
	return ch, nil
}

var _ SessionNotifier = (*noticeStore)(nil)

// noticeRig is an answerRig whose two replicas share a memory store with
// notices; plain and notified are how often they poll for handed answers
// without and with a subscription to the notices.
func noticeRig(t *testing.T, plain, notified time.Duration, opts Options) (*answerRig, *noticeHub, []*faultStore) {
	mem := &MemorySessionStore{}
	hub := newNoticeHub()
	fs := []*faultStore{{SessionStore: mem}, {SessionStore: mem}}
	a := newAnswerRigHook(t, []SessionStore{&noticeStore{fs[0], hub}, &noticeStore{fs[1], hub}}, opts, func(g *Gateway) {
		g.shared.pollPlain, g.shared.pollNotified = plain, notified
	})
	waitSubscribed(t, hub, 2)
	return a, hub, fs
}

// waitSubscribed waits for n subscriptions to the hub's notices.
func waitSubscribed(t *testing.T, hub *noticeHub, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if live, _ := hub.state(); live == n {
			return
		}
		if time.Now().After(deadline) {
			live, _ := hub.state()
			t.Fatalf("%d subscriptions to the notices, want %d", live, n)
		}
	}
}

// TestSharedSessionsNoticeHanded: with a store that has notices and
// polling slowed to once an hour, an answer the balancer sends to the
// replica that did not ask reaches the question (by the notice the
// handing replica sends), both ways; and a DELETE of the session on one
// replica ends the question waiting on the other.
func TestSharedSessionsNoticeHanded(t *testing.T) {
	a, _, _ := noticeRig(t, time.Hour, time.Hour, Options{})
	for i, asker := range []int{1, 0, 1} {
		s := a.call(asker, 20+i, "q2")
		qid := questionIDOf(within(t, s, 10*time.Second, "q2's question"))
		start := time.Now()
		if code := a.answer(1-asker, qid, fmt.Sprint("handed ", i)); code != http.StatusAccepted {
			t.Errorf("the answer's POST to the other replica: %d", code)
		}
		if res := within(t, s, 10*time.Second, "q2's result"); !strings.Contains(res, fmt.Sprintf("q2 got accept map[answer:handed %d]", i)) {
			t.Fatalf("q2's result: %s", res)
		}
		t.Logf("an answer handed to replica %d by notice: the call's result %s after the POST", asker, time.Since(start).Round(100*time.Microsecond))
	}
	s := a.call(1, 30, "q1")
	within(t, s, 10*time.Second, "q1's question")
	req, _ := http.NewRequestWithContext(testCtx(t, 10*time.Second), http.MethodDelete, a.rs[0].ts.URL+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer alice")
	req.Header.Set("Mcp-Session-Id", a.id)
	req.Header.Set("Mcp-Protocol-Version", v1125)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if code := drain(resp); code != http.StatusNoContent && code != http.StatusOK {
		t.Fatalf("DELETE: %d", code)
	}
	deadline := time.After(5 * time.Second)
	for {
		select {
		case l, ok := <-s:
			if !ok {
				return
			}
			if strings.Contains(l, " got ") {
				t.Fatalf("q1's call got an answer: %s", l)
			}
		case <-deadline:
			t.Fatal("q1's question still waits 5 s after its session was deleted on another replica (polling once an hour)")
		}
	}
}

// TestSharedSessionsNoticeResubscribe: the store's subscription drops and
// cannot be made again for a while: an answer handed meanwhile reaches its
// question by polling (every 250 ms while unsubscribed); once subscribed
// again (polling once an hour), the next one does by notice; Close ends
// the subscriptions and the goroutines that read them.
func TestSharedSessionsNoticeResubscribe(t *testing.T) {
	before := listeners()
	a, hub, _ := noticeRig(t, answerPoll, time.Hour, Options{})
	if n := listeners() - before; n != 2 {
		t.Errorf("%d goroutines listen for notices, want one a replica", n)
	}
	hand := func(i int, how string) {
		t.Helper()
		s := a.call(1, 40+i, "q2")
		qid := questionIDOf(within(t, s, 10*time.Second, "q2's question"))
		start := time.Now()
		a.answer(0, qid, fmt.Sprint("answer ", i))
		if res := within(t, s, 10*time.Second, "q2's result"); !strings.Contains(res, fmt.Sprintf("q2 got accept map[answer:answer %d]", i)) {
			t.Fatalf("q2's result: %s", res)
		}
		t.Logf("%s: the call's result %s after the POST", how, time.Since(start).Round(100*time.Microsecond))
	}
	hand(0, "subscribed")
	hub.setRefuse(true)
	hub.drop(nil)
	hand(1, "unsubscribed (by polling)")
	_, made := hub.state()
	hub.setRefuse(false)
	waitSubscribed(t, hub, 2)
	if _, again := hub.state(); again < made+2 {
		t.Fatalf("subscriptions made: %d then %d", made, again)
	}
	hand(2, "subscribed again (by notice)")
	a.rs[0].g.Close()
	a.rs[1].g.Close()
	if live, _ := hub.state(); live != 0 {
		t.Errorf("%d subscriptions left after Close", live)
	}
	if n := listeners() - before; n != 0 {
		t.Errorf("%d goroutines listen for notices after Close", n)
	}
}

// listeners counts the goroutines listening for a store's notices.
func listeners() int {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "gateway.(*Gateway).listenSessions(")
}

// TestSharedSessionsNoticeFlood: a flood of notices of sessions a
// replica has no question waiting in (a hostile writer of the store's
// channel, or many sessions of other replicas) reads nothing from the
// store; notices of the session it waits in, however many, are read
// together.
func TestSharedSessionsNoticeFlood(t *testing.T) {
	a, hub, fs := noticeRig(t, time.Hour, time.Hour, Options{})
	s := a.call(1, 50, "q2")
	within(t, s, 10*time.Second, "q2's question")
	time.Sleep(50 * time.Millisecond) // the sweep of the subscription's start
	loads := fs[1].loads.Load()
	start := time.Now()
	const n = 100000
	for i := range n {
		if i%2 == 0 {
			hub.send(rand.Text(), time.Second) // a session id of another session
		} else {
			hub.send(fmt.Sprintf("%026d", i), time.Second)
		}
	}
	hub.send(strings.Repeat("A", 1<<16), time.Second)
	t.Logf("%d notices of other sessions taken in %s", n, time.Since(start).Round(time.Millisecond))
	if got := fs[1].loads.Load() - loads; got != 0 {
		t.Errorf("%d notices of sessions with no question waiting here made %d reads of the store", n, got)
	}
	for range 1000 {
		hub.send(a.id, time.Second)
	}
	time.Sleep(200 * time.Millisecond)
	got := fs[1].loads.Load() - loads
	t.Logf("1000 notices of the session with a question waiting: %d reads of its record", got)
	if got < 1 {
		t.Errorf("1000 notices of the session with a question waiting: %d reads of its record", got)
	}
}

package order

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// token returns the progress token of the marker msg.
func token(t *testing.T, m *Marks, msg jsonrpc.Message) any {
	t.Helper()
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !m.IsMarker(req) {
		t.Fatalf("%#v is no marker", msg)
	}
	var p struct {
		ProgressToken any `json:"progressToken"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		t.Fatal(err)
	}
	return p.ProgressToken
}

// TestMarksWait: Wait returns at once with every marker reached, waits
// for the markers issued before it while they are not, and gives up when
// its context ends, when the connection is gone, and after Quiet without
// a notification handled, after which no Wait waits for that marker
// again; another connection's markers are not taken.
func TestMarksWait(t *testing.T) {
	m := New()
	if !m.Wait(context.Background(), nil) {
		t.Fatal("no marker issued, yet Wait waited")
	}
	tok := token(t, m, m.Issue())
	if New().Reached(tok) || m.Reached("mcpadapter-order-x-1") || m.Reached(1.0) || New().IsMarker(New().Issue()) {
		t.Fatal("a token not of this connection was taken for a marker")
	}
	done := make(chan bool)
	go func() { done <- m.Wait(context.Background(), nil) }()
	select {
	case <-done:
		t.Fatal("Wait returned before the marker was reached")
	case <-time.After(50 * time.Millisecond):
	}
	if !m.Reached(tok) {
		t.Fatal("the marker was not recognised")
	}
	m.Handled()
	if !<-done {
		t.Fatal("Wait gave up on a reached marker")
	}

	m.Issue()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if m.Wait(ctx, nil) {
		t.Error("Wait with an ended context reported the marker reached")
	}
	gone := make(chan struct{})
	close(gone)
	if m.Wait(context.Background(), gone) {
		t.Error("Wait on a gone connection reported the marker reached")
	}
	start := time.Now()
	if m.Wait(context.Background(), nil) || time.Since(start) < Quiet {
		t.Errorf("Wait with nothing handled returned after %v, want false after %v", time.Since(start), Quiet)
	}
	// The marker given up on (its handler blocks, or its reader dropped
	// it) holds no later Wait back.
	start = time.Now()
	m.Wait(context.Background(), nil)
	if d := time.Since(start); d > Quiet/2 {
		t.Errorf("a Wait after one gave up on the marker waited %v for it again", d)
	}
}

// TestConnMarksResponsesAfterMessages: over go-sdk's in-memory transport,
// the connection passes up a marker before a response that follows a
// notification, and none before a response that follows nothing since
// the last.
func TestConnMarksResponsesAfterMessages(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ct, st := mcp.NewInMemoryTransports()
	server, err := st.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	marks := New()
	client, err := (&Transport{Inner: ct, Marks: marks}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	id, _ := jsonrpc.MakeID(float64(1))
	note := &jsonrpc.Request{Method: "notifications/message", Params: json.RawMessage(`{"level":"info","data":"x"}`)}
	resp := &jsonrpc.Response{ID: id, Result: json.RawMessage(`{}`)}
	sent := []jsonrpc.Message{resp, note, resp, resp}
	go func() {
		for _, m := range sent {
			if err := server.Write(ctx, m); err != nil {
				return
			}
		}
	}()
	var got []string
	for range len(sent) + 1 {
		m, err := client.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		switch m := m.(type) {
		case *jsonrpc.Request:
			if marks.IsMarker(m) {
				got = append(got, "marker")
			} else {
				got = append(got, m.Method)
			}
		case *jsonrpc.Response:
			got = append(got, "response")
		}
	}
	want := "response notifications/message marker response response"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("passed up %q, want %q", s, want)
	}
}

// TestMarksWaitInHandler: in the handler of one of the connection's
// notifications (Handle), Wait does not wait for the markers issued
// before it, nor give up on them (they come once the handler returns);
// once the handler has returned, or for another connection's handler, it
// waits.
func TestMarksWaitInHandler(t *testing.T) {
	m := New()
	tok := token(t, m, m.Issue())
	ctx, returned := m.Handle(context.Background())
	if m.Wait(ctx, nil) {
		t.Fatal("Wait in a handler reports a marker reached that is not")
	}
	if m.reached.Load() != 0 {
		t.Fatal("Wait in a handler gave up on the marker behind it")
	}
	other, _ := New().Handle(context.Background())
	returned()
	for name, ctx := range map[string]context.Context{"after the handler returned": ctx, "in another connection's handler": other} {
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan bool)
		go func() { done <- m.Wait(cctx, nil) }()
		select {
		case <-done:
			t.Fatalf("%s: Wait did not wait", name)
		case <-time.After(50 * time.Millisecond):
		}
		cancel()
		<-done
	}
	if !m.Reached(tok) {
		t.Fatal("the marker was not recognised")
	}
	if !m.Wait(ctx, nil) {
		t.Fatal("Wait gave up on a reached marker")
	}
}

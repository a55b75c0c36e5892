// Package loopproof runs a model SDK binding's documented human-in-the-loop
// loop against the hitltest servers and scripted user: servers of both
// protocol eras asking one, two or many questions per call, several calls
// per turn in every order, and a user who never answers.
package loopproof

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/hitltest"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// A ModelCall is one tool call of a model turn.
type ModelCall struct{ ID, Name, Args string }

// A Loop runs one model turn's calls through a binding's documented loop,
// asking the user with ask, and returns what the binding sends the model
// back (its messages, marshalled to JSON by Prove to find the tools'
// words).
type Loop func(ctx context.Context, calls []ModelCall, ask func(*elicitation.Interrupt) *elicitation.Resume) (any, error)

// Prove runs the proofs; bind returns the loop of a binding over tools.
func Prove(t *testing.T, bind func(t *testing.T, tools []*mcpadapter.Tool) Loop) {
	for _, era := range []testserver.Era{testserver.Legacy, testserver.Modern} {
		for _, n := range []int{1, 2, 5} {
			t.Run(fmt.Sprintf("%s/%d", era, n), func(t *testing.T) { scripted(t, era, n, bind) })
		}
		t.Run(era.String()+"/never-answers", func(t *testing.T) { neverAnswers(t, era, bind) })
	}
}

func tools(t *testing.T, srv *hitltest.Server) []*mcpadapter.Tool {
	t.Helper()
	a, err := mcpadapter.New(srv.Server, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ts, err := a.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func ask(id, call string, n int) ModelCall {
	return ModelCall{ID: id, Name: "ask", Args: fmt.Sprintf(`{"call":%q,"n":%d}`, call, n)}
}

func echo(id, text string) ModelCall {
	return ModelCall{ID: id, Name: "echo", Args: fmt.Sprintf(`{"text":%q}`, text)}
}

func sent(t *testing.T, msgs any) string {
	t.Helper()
	b, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// scripted: every call of every order finishes once, with the user's
// answers, and the server receives what the user answered.
func scripted(t *testing.T, era testserver.Era, n int, bind func(*testing.T, []*mcpadapter.Tool) Loop) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := hitltest.NewServer(era)
	loop := bind(t, tools(t, srv))
	u := &hitltest.User{Decide: func(r elicitation.Request) elicitation.Response {
		if strings.Contains(r.Message, " q2/") {
			return elicitation.Response{Action: elicitation.Decline}
		}
		return elicitation.Response{Action: elicitation.Accept, Content: map[string]any{"ok": true, "note": r.Message, "amount": 7}}
	}}
	for i, calls := range [][]ModelCall{
		{echo("c1", "first"), ask("c2", "a", n), ask("c3", "b", n)},
		{ask("c1", "c", n), echo("c2", "between"), ask("c3", "d", n)},
		{ask("c1", "e", n), ask("c2", "f", n), echo("c3", "last")},
	} {
		msgs, err := loop(ctx, calls, u.Answer)
		if err != nil {
			t.Fatalf("order %d: %v", i, err)
		}
		out := sent(t, msgs)
		for _, c := range calls {
			var in struct{ Call, Text string }
			_ = json.Unmarshal([]byte(c.Args), &in)
			want := in.Text
			if c.Name == "ask" {
				want = in.Call + " done"
			}
			if !strings.Contains(out, want) {
				t.Errorf("order %d: what goes back to the model lacks %q: %s", i, want, out)
			}
		}
		if strings.Contains(out, "waiting for the user") {
			t.Errorf("order %d: a call still waits: %s", i, out)
		}
	}
	for _, c := range "abcdef" {
		if got := srv.Started(string(c)); got != 1 {
			t.Errorf("call %c started %d times", c, got)
		}
	}
	hitltest.Match(t, u, srv)
}

// neverAnswers: the user leaves a question unanswered; the model is told
// the call waits, and the next turn is not held up by it (on a
// handshake-era server the question is closed: the server hears
// "cancel").
func neverAnswers(t *testing.T, era testserver.Era, bind func(*testing.T, []*mcpadapter.Tool) Loop) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := hitltest.NewServer(era)
	loop := bind(t, tools(t, srv))
	msgs, err := loop(ctx, []ModelCall{ask("c1", "charge", 1), echo("c2", "same turn")}, func(*elicitation.Interrupt) *elicitation.Resume { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if out := sent(t, msgs); !strings.Contains(out, "waiting for the user") {
		t.Errorf("the model is not told the call waits: %s", out)
	}
	msgs, err = loop(ctx, []ModelCall{echo("c3", "next turn")}, func(in *elicitation.Interrupt) *elicitation.Resume {
		t.Errorf("the next turn asked %+v", in)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if out := sent(t, msgs); !strings.Contains(out, "next turn") {
		t.Errorf("next turn: %s", out)
	}
	if era == testserver.Legacy {
		hitltest.Match(t, &hitltest.User{}, srv, hitltest.Question("charge", 1, 1))
	}
}

package eino_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cloudwego/eino/schema"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/eino"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/hitltest"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

var hitlEras = []testserver.Era{testserver.Legacy, testserver.Modern}

func askCall(id, name string, n int) schema.ToolCall {
	return call(id, "ask", fmt.Sprintf(`{"call":%q,"n":%d}`, name, n))
}

// TestDocumentedLoop: docs/human-in-the-loop.md shows runWithUser as it is.
func TestDocumentedLoop(t *testing.T) {
	hitltest.QuotedInDocs(t, "loop_test.go", "runWithUser", "../docs/human-in-the-loop.md")
}

// TestHITLAgentScriptedUser: the documented loop with a scripted user,
// against servers of both eras asking one, two or many questions per
// call, several calls per turn in every order. Every stop of the run has
// a question, each call runs once, and the server receives what the user
// answered, question by question.
func TestHITLAgentScriptedUser(t *testing.T) {
	for _, era := range hitlEras {
		for _, n := range []int{1, 2, 5} {
			t.Run(fmt.Sprintf("%s/%d", era, n), func(t *testing.T) {
				ctx := ctx30(t)
				srv := hitltest.NewServer(era)
				tools := adapterTools(t, srv.Server, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
				u := &hitltest.User{}
				for i, calls := range [][]schema.ToolCall{
					{call("c1", "echo", `{"text":"first"}`), askCall("c2", "a", n), askCall("c3", "b", n)},
					{askCall("c1", "c", n), call("c2", "echo", `{"text":"between"}`), askCall("c3", "d", n)},
					{askCall("c1", "e", n), askCall("c2", "f", n), call("c3", "echo", `{"text":"last"}`)},
				} {
					agent := newAgent(t, tools, nil, calls)
					answer, err := runWithUser(ctx, agent, fmt.Sprintf("run-%d", i), "go", u.Answer)
					if err != nil {
						t.Fatalf("order %d: %v", i, err)
					}
					for _, c := range calls {
						var want string
						if c.Function.Name == "echo" {
							want = strings.Split(c.Function.Arguments, `"`)[3]
						} else {
							want = strings.Split(c.Function.Arguments, `"`)[3] + " done"
						}
						if !strings.Contains(answer, want) {
							t.Errorf("order %d: the answer %q lacks %q", i, answer, want)
						}
					}
				}
				for _, c := range "abcdef" {
					if got := srv.Started(string(c)); got != 1 {
						t.Errorf("call %c started %d times", c, got)
					}
				}
				hitltest.Match(t, u, srv)
			})
		}
	}
}

// TestHITLAgentNeverAnswers: a run stops at a question and the user never
// answers it; a new run on the same tools does not inherit it: it runs
// without stopping (it does not stop with an interrupt eino.Interrupts
// cannot show, nor wait out the park timeout). On a handshake-era
// server the old question is closed (the server gets "cancel") and
// resuming the old run says so.
func TestHITLAgentNeverAnswers(t *testing.T) {
	for _, era := range hitlEras {
		t.Run(era.String(), func(t *testing.T) {
			ctx := ctx30(t)
			srv := hitltest.NewServer(era)
			tools := adapterTools(t, srv.Server, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
			first := newAgent(t, tools, nil, []schema.ToolCall{askCall("c1", "charge", 1)})
			tr := drainTurn(t, first.Query(ctx, "run-1", "charge me"))
			if !tr.interrupted || len(tr.interrupts) != 1 {
				t.Fatalf("run 1: %+v", tr)
			}
			old := tr.interrupts[0]
			second := newAgent(t, tools, nil, []schema.ToolCall{call("c1", "echo", `{"text":"new run"}`)})
			answer, err := runWithUser(ctx, second, "run-2", "echo", func(in *elicitation.Interrupt) *elicitation.Resume {
				t.Fatalf("run 2 asked %+v", in)
				return nil
			})
			if err != nil || !strings.Contains(answer, "new run") {
				t.Fatalf("run 2: %v %q", err, answer)
			}
			u := &hitltest.User{}
			tr = drainTurn(t, must(first.Resume(ctx, "run-1", map[string]*elicitation.Resume{old.ID: u.Answer(old.Interrupt)})))
			if era == testserver.Modern {
				if tr.err != nil || !strings.Contains(tr.final, "charge done") {
					t.Fatalf("answering run 1 later: %+v", tr)
				}
				hitltest.Match(t, u, srv)
				return
			}
			var ae *mcpadapter.AnsweredError
			if !errors.As(tr.err, &ae) && (tr.err == nil || !strings.Contains(tr.err.Error(), "moved on")) {
				t.Fatalf("resuming the closed question: %+v", tr)
			}
			u.Forget(hitltest.Question("charge", 1, 1))
			hitltest.Match(t, u, srv, hitltest.Question("charge", 1, 1))
		})
	}
}

// TestHITLAgentReplayedResume: a resume replayed from an old copy of the
// checkpoint (a retried request) is refused; the server hears the answer
// once.
func TestHITLAgentReplayedResume(t *testing.T) {
	for _, era := range hitlEras {
		t.Run(era.String(), func(t *testing.T) {
			ctx := ctx30(t)
			srv := hitltest.NewServer(era)
			tools := adapterTools(t, srv.Server, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
			store := newCopyStore()
			agent := newAgent(t, tools, store, []schema.ToolCall{askCall("c1", "pay", 2)})
			tr := drainTurn(t, agent.Query(ctx, "run", "pay"))
			if len(tr.interrupts) != 1 {
				t.Fatalf("%+v", tr)
			}
			saved := store.copy("run")
			u := &hitltest.User{}
			answers := map[string]*elicitation.Resume{tr.interrupts[0].ID: u.Answer(tr.interrupts[0].Interrupt)}
			tr2 := drainTurn(t, must(agent.Resume(ctx, "run", answers)))
			if len(tr2.interrupts) != 1 || tr2.interrupts[0].Interrupt.Requests[0].Message != hitltest.Question("pay", 2, 2) {
				t.Fatalf("question 2: %+v", tr2)
			}
			store.restore("run", saved)
			tr3 := drainTurn(t, must(agent.Resume(ctx, "run", answers)))
			var ae *mcpadapter.AnsweredError
			if !errors.As(tr3.err, &ae) && (tr3.err == nil || !strings.Contains(tr3.err.Error(), "already answered")) {
				t.Fatalf("the replayed resume: %+v", tr3)
			}
			hitltest.Match(t, u, srv)
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// copyStore is a MemoryStore whose checkpoints a test can copy and put
// back, as an application replaying an old request would.
type copyStore struct{ *eino.MemoryStore }

func newCopyStore() copyStore { return copyStore{eino.NewMemoryStore()} }

func (s copyStore) copy(id string) []byte {
	b, _, _ := s.Get(context.Background(), id)
	return append([]byte(nil), b...)
}

func (s copyStore) restore(id string, b []byte) { _ = s.Set(context.Background(), id, b) }

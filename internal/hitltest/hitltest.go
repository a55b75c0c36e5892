// Package hitltest is the test bed of the human-in-the-loop proofs: a
// server of either protocol era whose tools ask one, two or many
// questions per call and record every answer they receive, and a
// scripted user who answers questions and records what it answered. A
// test compares the two, question by question.
package hitltest

import (
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Answer is an answer to one question, as JSON would carry it.
type Answer struct {
	Action  string
	Content map[string]any
}

// normal returns a with its content as JSON decodes it (numbers float64).
func normal(a Answer) Answer {
	if len(a.Content) == 0 {
		return Answer{Action: a.Action}
	}
	b, _ := json.Marshal(a.Content)
	var c map[string]any
	_ = json.Unmarshal(b, &c)
	return Answer{Action: a.Action, Content: c}
}

// Server is an MCP server whose "ask" tool asks questions. Its questions'
// messages are unique: "<call> q<i>/<n>".
type Server struct {
	*mcp.Server
	era testserver.Era

	mu       sync.Mutex
	received map[string][]Answer // by question message, every answer received
	started  map[string]int      // by call id, how often the tool started
	finished map[string]string   // by call id, the tool's result text
	seen     map[string][]Seen   // by call id, every request
	logins   map[string]bool     // by call id, -32042 sent
	shed     int                 // requests of the shed tool
	// ShedAsked is closed when the shed tool gets its first request.
	ShedAsked chan struct{}
}

// AskIn is the input of the ask tool.
type AskIn struct {
	// Call names the call; questions are "<call> q<i>/<n>".
	Call string `json:"call"`
	// N is how many questions to ask (at least 1).
	N int `json:"n"`
	// Together asks all N in one round (2026-07-28 only).
	Together bool `json:"together,omitempty"`
	// LoginFirst makes the first call fail with -32042 (URL elicitation
	// required); the call made again after it asks the questions.
	LoginFirst bool `json:"loginFirst,omitempty"`
	// Secret is a value a test hides from the model (ArgTransform).
	Secret string `json:"secret,omitempty"`
}

// Seen is one tools/call request of the ask tool as the server saw it.
type Seen struct {
	Args map[string]any
	Meta map[string]any
}

// Form is the form every question asks for.
const Form = `{"type":"object","properties":{"ok":{"type":"boolean"},"amount":{"type":"integer"},"note":{"type":"string"}},"required":["ok"]}`

// NewServer returns a server of era e with the tools ask and echo.
func NewServer(e testserver.Era) *Server {
	opts := &mcp.ServerOptions{}
	if e == testserver.Legacy {
		opts.SupportedProtocolVersions = append([]string(nil), testserver.LegacyVersions...)
	}
	s := &Server{Server: mcp.NewServer(&mcp.Implementation{Name: "hitl", Version: "1.0.0"}, opts), era: e,
		received: map[string][]Answer{}, started: map[string]int{}, finished: map[string]string{},
		seen: map[string][]Seen{}, logins: map[string]bool{}, ShedAsked: make(chan struct{})}
	mcp.AddTool(s.Server, &mcp.Tool{Name: "ask", Description: "Asks the user n questions."}, s.ask)
	mcp.AddTool(s.Server, &mcp.Tool{Name: "echo", Description: "Echoes text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return text(in.Text), nil, nil
		})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "shed", Description: "Always asks to be called again (load shedding)."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			s.mu.Lock()
			s.shed++
			if s.shed == 1 {
				close(s.ShedAsked)
			}
			s.mu.Unlock()
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{}, RequestState: "again"}, nil, nil
		})
	return s
}

// Shed returns how many requests the shed tool got.
func (s *Server) Shed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shed
}

// Seen returns the requests of the call named call.
func (s *Server) Seen(call string) []Seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen[call])
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// Question returns the message of question i of n of call.
func Question(call string, i, n int) string { return fmt.Sprintf("%s q%d/%d", call, i, n) }

func form() map[string]any {
	var m map[string]any
	_ = json.Unmarshal([]byte(Form), &m)
	return m
}

func (s *Server) record(msg string, r *mcp.ElicitResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.received[msg] = append(s.received[msg], normal(Answer{Action: r.Action, Content: r.Content}))
}

func (s *Server) finish(call, out string) *mcp.CallToolResult {
	s.mu.Lock()
	s.finished[call] = out
	s.mu.Unlock()
	return text(out)
}

func (s *Server) ask(ctx context.Context, req *mcp.CallToolRequest, in AskIn) (*mcp.CallToolResult, any, error) {
	if in.N < 1 {
		in.N = 1
	}
	var args map[string]any
	_ = json.Unmarshal(req.Params.Arguments, &args)
	s.mu.Lock()
	s.seen[in.Call] = append(s.seen[in.Call], Seen{Args: args, Meta: req.Params.Meta})
	login := in.LoginFirst && !s.logins[in.Call]
	s.logins[in.Call] = s.logins[in.Call] || login
	s.mu.Unlock()
	if login {
		return nil, nil, mcp.URLElicitationRequiredError([]*mcp.ElicitParams{{Mode: "url", Message: "Sign in first", URL: "https://auth.example.com/login", ElicitationID: "login-" + in.Call}})
	}
	if ip := req.Session.InitializeParams(); ip != nil && ip.ProtocolVersion < testserver.ModernVersion {
		s.mu.Lock()
		s.started[in.Call]++
		s.mu.Unlock()
		for i := 1; i <= in.N; i++ {
			msg := Question(in.Call, i, in.N)
			r, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: form()})
			if err != nil {
				return nil, nil, err
			}
			s.record(msg, r)
			if r.Action == "cancel" {
				return s.finish(in.Call, fmt.Sprintf("%s cancelled at q%d", in.Call, i)), nil, nil
			}
		}
		return s.finish(in.Call, in.Call+" done"), nil, nil
	}
	// 2026-07-28: one round per question (or all at once), the round in
	// requestState.
	p := req.Params
	round := 0
	if p.RequestState != "" {
		r, err := strconv.Atoi(strings.TrimPrefix(p.RequestState, in.Call+":"))
		if err != nil {
			return nil, nil, fmt.Errorf("bad requestState %q", p.RequestState)
		}
		round = r
	} else {
		s.mu.Lock()
		s.started[in.Call]++
		s.mu.Unlock()
	}
	asked := []int{round}
	if in.Together && round > 0 {
		asked = nil
		for i := 1; i <= in.N; i++ {
			asked = append(asked, i)
		}
	}
	if round > 0 {
		for _, i := range asked {
			msg := Question(in.Call, i, in.N)
			r, ok := p.InputResponses[fmt.Sprintf("q%d", i)].(*mcp.ElicitResult)
			if !ok {
				return nil, nil, fmt.Errorf("no answer to %q", msg)
			}
			s.record(msg, r)
			if r.Action == "cancel" {
				return s.finish(in.Call, fmt.Sprintf("%s cancelled at q%d", in.Call, i)), nil, nil
			}
		}
		if in.Together || round == in.N {
			return s.finish(in.Call, in.Call+" done"), nil, nil
		}
	}
	next := mcp.InputRequestMap{}
	if in.Together {
		for i := 1; i <= in.N; i++ {
			next[fmt.Sprintf("q%d", i)] = &mcp.ElicitParams{Mode: "form", Message: Question(in.Call, i, in.N), RequestedSchema: form()}
		}
		return &mcp.CallToolResult{InputRequests: next, RequestState: in.Call + ":" + strconv.Itoa(in.N)}, nil, nil
	}
	i := round + 1
	next[fmt.Sprintf("q%d", i)] = &mcp.ElicitParams{Mode: "form", Message: Question(in.Call, i, in.N), RequestedSchema: form()}
	return &mcp.CallToolResult{InputRequests: next, RequestState: in.Call + ":" + strconv.Itoa(i)}, nil, nil
}

// Received returns every answer the server received, by question.
func (s *Server) Received() map[string][]Answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string][]Answer, len(s.received))
	for k, v := range s.received {
		out[k] = slices.Clone(v)
	}
	return out
}

// Started returns how often the call named call started.
func (s *Server) Started(call string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started[call]
}

// Finished returns the result text of the call named call, or "".
func (s *Server) Finished(call string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.finished[call]
}

// User is a scripted user: it answers each question by its message, the
// same way every time, and records what it answered.
type User struct {
	// Decide chooses the answer to a question; nil accepts with
	// {"ok": true, "amount": <question number>, "note": <message>}.
	Decide func(r elicitation.Request) elicitation.Response

	mu       sync.Mutex
	answered map[string]Answer // by question message
	asked    []string          // messages in the order they were asked
}

// Answer answers the questions of one interrupt, records the answers and
// returns the resume.
func (u *User) Answer(in *elicitation.Interrupt) *elicitation.Resume {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.answered == nil {
		u.answered = map[string]Answer{}
	}
	r := &elicitation.Resume{Responses: map[string]elicitation.Response{}}
	for _, q := range in.Requests {
		var resp elicitation.Response
		if u.Decide != nil {
			resp = u.Decide(q)
		} else {
			resp = elicitation.Response{Action: elicitation.Accept, Content: map[string]any{"ok": true, "amount": numberIn(q.Message), "note": q.Message}}
		}
		r.Responses[q.Key] = resp
		u.answered[q.Message] = normal(Answer{Action: string(resp.Action), Content: resp.Content})
		u.asked = append(u.asked, q.Message)
	}
	return r
}

// Forget removes the record of an answer the user gave that must not
// reach the server (an answer the test expects to be refused).
func (u *User) Forget(message string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.answered, message)
}

// Answered returns what the user answered, by question message.
func (u *User) Answered() map[string]Answer {
	u.mu.Lock()
	defer u.mu.Unlock()
	return maps.Clone(u.answered)
}

func numberIn(msg string) int {
	_, after, _ := strings.Cut(msg, " q")
	n, _, _ := strings.Cut(after, "/")
	i, _ := strconv.Atoi(n)
	return i
}

// Match checks that the server received exactly what the user answered:
// one answer per question, the same action and content; closed names
// questions the user never answered, which the server must have received
// as "cancel".
func Match(t testing.TB, u *User, s *Server, closed ...string) {
	t.Helper()
	got := s.Received()
	want := u.Answered()
	for msg, a := range want {
		r := got[msg]
		if len(r) != 1 {
			t.Errorf("question %q: the server received %d answers %+v, want exactly 1: %+v", msg, len(r), r, a)
			continue
		}
		if !reflect.DeepEqual(r[0], a) {
			t.Errorf("question %q: the server received %+v, the user answered %+v", msg, r[0], a)
		}
	}
	for _, msg := range closed {
		if r := got[msg]; len(r) != 1 || r[0].Action != "cancel" {
			t.Errorf("question %q, never answered: the server received %+v, want one cancel", msg, r)
		}
	}
	for msg, r := range got {
		if _, ok := want[msg]; !ok && !slices.Contains(closed, msg) {
			t.Errorf("question %q: the server received %+v, which the user never answered", msg, r)
		}
	}
}

// QuotedInDocs checks that the declaration of name in the Go file goFile
// appears, byte for byte, in a ```go block of the Markdown file doc: the
// loops the documentation shows are the ones the tests run.
func QuotedInDocs(t testing.TB, goFile, name, doc string) {
	t.Helper()
	src, err := os.ReadFile(goFile)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, goFile, src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var decl string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != name {
			continue
		}
		start := fd.Pos()
		if fd.Doc != nil {
			start = fd.Doc.Pos()
		}
		decl = string(src[fset.Position(start).Offset:fset.Position(fd.End()).Offset])
	}
	if decl == "" {
		t.Fatalf("%s: no func %s", goFile, name)
	}
	md, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(md), "```go\n")[1:] {
		code, _, _ := strings.Cut(block, "```")
		if strings.Contains(code, decl) {
			return
		}
	}
	t.Errorf("%s does not quote func %s of %s as it is:\n%s", doc, name, goFile, decl)
}

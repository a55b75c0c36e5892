package term

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/mcpadapter/mcpadapter/elicitation"
)

const (
	// maxTries bounds the bad answers to one question (an action or a
	// field) before Ask gives up with an error.
	maxTries = 5
	// maxRounds bounds how often a form is started over because the whole
	// answer did not pass elicitation's check.
	maxRounds = 3
)

// errEOF is returned internally when the input ends in the middle of a
// question.
var errEOF = errors.New("end of input")

// Prompter asks questions on out and reads the answers, one line each, from
// a single buffered reader around in. Use one Prompter for all the input of
// a session (elicitations and the agent REPL's messages alike), so no
// buffered input is lost between calls.
//
// A Prompter is not safe for concurrent use. When ctx is cancelled while a
// line is being read, the read goes on in the background and its line is
// returned by the next call.
type Prompter struct {
	in  *bufio.Reader
	out io.Writer

	// lines receives the result of the outstanding read (pending).
	lines   chan lineResult
	pending bool
	eof     bool
	err     error
}

type lineResult struct {
	s   string
	err error
}

// NewPrompter returns a Prompter reading from in and writing to out.
func NewPrompter(in io.Reader, out io.Writer) *Prompter {
	return &Prompter{
		in:    bufio.NewReader(in),
		out:   out,
		lines: make(chan lineResult, 1),
	}
}

// Ask asks one elicitation request at the terminal in/out. It is a
// one-shot NewPrompter(in, out).Ask(ctx, r); input buffered past the last
// answer is lost, so use a Prompter to ask more than once on the same in.
func Ask(ctx context.Context, in io.Reader, out io.Writer, r elicitation.Request) (elicitation.Response, error) {
	return NewPrompter(in, out).Ask(ctx, r)
}

// Line prints prompt and reads one line, without its line ending. It
// returns false (and a nil error) at the end of the input, and ctx.Err()
// when ctx is done first.
func (p *Prompter) Line(ctx context.Context, prompt string) (string, bool, error) {
	s, err := p.readLine(ctx, prompt)
	if err == errEOF {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return s, true, nil
}

// readLine prints prompt and reads one line. At the end of the input it
// returns errEOF.
func (p *Prompter) readLine(ctx context.Context, prompt string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if p.err != nil {
		return "", p.err
	}
	if p.eof {
		return "", errEOF
	}
	fmt.Fprint(p.out, prompt)
	if !p.pending {
		p.pending = true
		go func() {
			s, err := p.in.ReadString('\n')
			p.lines <- lineResult{s, err}
		}()
	}
	var res lineResult
	select {
	case res = <-p.lines:
		p.pending = false
	case <-ctx.Done():
		fmt.Fprintln(p.out)
		return "", ctx.Err()
	}
	switch {
	case res.err == nil:
	case errors.Is(res.err, io.EOF):
		p.eof = true
		if res.s == "" {
			fmt.Fprintln(p.out)
			return "", errEOF
		}
		fmt.Fprintln(p.out) // the last line had no newline of its own
	default:
		p.err = fmt.Errorf("term: reading input: %w", res.err)
		return "", p.err
	}
	s := strings.TrimSuffix(res.s, "\n")
	return strings.TrimSuffix(s, "\r"), nil
}

func (p *Prompter) printf(format string, args ...any) {
	fmt.Fprintf(p.out, format, args...)
}

// Ask asks one elicitation request and returns the response to send, as
// checked (and completed with the form's defaults) by r.Check.
//
// A URL request shows the URL and its host, and asks whether to open it. A
// form request asks whether to answer at all (an empty line accepts), then
// asks each field of the requested schema in the schema's order; an empty
// line takes the field's default, skips an optional field, and asks a
// required one again. An answer that does not fit prints a one-line reason
// and the field is asked again, at most 5 times; when the whole form does
// not pass r.Check it starts over, at most 3 times.
//
// At the end of the input Ask returns a Cancel response and a nil error
// (the user closed the terminal). When ctx is done it returns ctx.Err().
func (p *Prompter) Ask(ctx context.Context, r elicitation.Request) (elicitation.Response, error) {
	resp, err := p.ask(ctx, r)
	if err == errEOF {
		return elicitation.Response{Action: elicitation.Cancel}, nil
	}
	if err != nil {
		return elicitation.Response{}, err
	}
	return resp, nil
}

func (p *Prompter) ask(ctx context.Context, r elicitation.Request) (elicitation.Response, error) {
	if err := ctx.Err(); err != nil {
		return elicitation.Response{}, err
	}
	var fields []*field
	if r.Mode != elicitation.ModeURL {
		var err error
		if fields, err = parseForm(r.RequestedSchema); err != nil {
			return elicitation.Response{}, fmt.Errorf("term: elicitation %q: %w", r.Key, err)
		}
	}
	if msg := strings.TrimSpace(r.Message); msg != "" {
		p.printf("%s\n", clean(msg))
	}
	if r.Mode == elicitation.ModeURL {
		p.printf("%s\n", linkLine(r.URL))
		action, err := p.askAction(ctx, "Open it and continue? [a]ccept / [d]ecline / [c]ancel: ", "")
		if err != nil {
			return elicitation.Response{}, err
		}
		return r.Check(elicitation.Response{Action: action})
	}
	action, err := p.askAction(ctx, "Respond? [a]ccept / [d]ecline / [c]ancel (Enter accepts): ", elicitation.Accept)
	if err != nil {
		return elicitation.Response{}, err
	}
	if action != elicitation.Accept {
		return r.Check(elicitation.Response{Action: action})
	}
	for round := 1; ; round++ {
		content := make(map[string]any, len(fields))
		for _, f := range fields {
			v, set, err := p.askField(ctx, r, f)
			if err != nil {
				return elicitation.Response{}, err
			}
			if set {
				content[f.name] = v
			}
		}
		resp, err := r.Check(elicitation.Response{Action: elicitation.Accept, Content: content})
		if err == nil {
			return resp, nil
		}
		if round >= maxRounds {
			return elicitation.Response{}, fmt.Errorf("term: the answers did not fit the form %d times: %w", maxRounds, err)
		}
		p.printf("  ! the answers do not fit the form: %s; starting over\n", reason(err))
	}
}

// linkLine shows a URL with its host up front, e.g.
// "Open this link on example.com: https://example.com/pay".
func linkLine(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "Open this link (it has no host name; check it carefully): " + cleanLine(raw)
	}
	host := cleanLine(u.Host)
	note := ""
	for _, c := range u.Host {
		if c > 0x7f {
			note = " (the host name has non-ASCII letters; check it carefully)"
			break
		}
	}
	return "Open this link on " + host + note + ": " + cleanLine(raw)
}

// askAction asks accept/decline/cancel; an empty line gives def, or asks
// again when def is "".
func (p *Prompter) askAction(ctx context.Context, prompt string, def elicitation.Action) (elicitation.Action, error) {
	for tries := 1; ; tries++ {
		line, err := p.readLine(ctx, prompt)
		if err != nil {
			return "", err
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "":
			if def != "" {
				return def, nil
			}
		case "a", "accept", "y", "yes":
			return elicitation.Accept, nil
		case "d", "decline", "n", "no":
			return elicitation.Decline, nil
		case "c", "cancel":
			return elicitation.Cancel, nil
		}
		if tries >= maxTries {
			return "", fmt.Errorf("term: no valid answer (a, d or c) after %d tries", maxTries)
		}
		p.printf("  ! answer a (accept), d (decline) or c (cancel)\n")
	}
}

// printField shows what the field asks for: its label and constraints, its
// description, and its numbered choices.
func (p *Prompter) printField(f *field) {
	p.printf("%s (%s)\n", f.label(), f.describe())
	if d := strings.TrimSpace(f.Description); d != "" {
		p.printf("  %s\n", cleanLine(d))
	}
	for i, c := range f.choices() {
		p.printf("  %d) %s\n", i+1, c.label)
	}
}

// askField asks one field until it gets a fitting answer. set is false
// when the field is left out (to take its default, or skipped).
func (p *Prompter) askField(ctx context.Context, r elicitation.Request, f *field) (v any, set bool, err error) {
	p.printField(f)
	for tries := 1; ; tries++ {
		line, err := p.readLine(ctx, f.prompt())
		if err != nil {
			return nil, false, err
		}
		var why string
		if s := strings.TrimSpace(line); s == "" {
			if f.hasDefault() || !f.required {
				return nil, false, nil
			}
			why = "an answer is required"
		} else {
			v, err := f.parse(s)
			if err == nil {
				err = checkField(r, f.name, v)
			}
			if err == nil {
				return v, true, nil
			}
			var hard *hardError
			if errors.As(err, &hard) {
				return nil, false, hard.err
			}
			why = err.Error()
		}
		if tries >= maxTries {
			return nil, false, fmt.Errorf("term: field %q: no valid answer after %d tries (last: %s)", f.name, maxTries, why)
		}
		p.printf("  ! %s\n", cleanLine(why))
	}
}

// hardError is a problem with the form itself rather than with the answer.
type hardError struct{ err error }

func (e *hardError) Error() string { return e.err.Error() }

// checkField validates one answer with elicitation's own rules, by checking
// a form holding only that field: errors about other fields (missing
// required ones) do not count.
func checkField(r elicitation.Request, name string, v any) error {
	_, err := r.Check(elicitation.Response{Action: elicitation.Accept, Content: map[string]any{name: v}})
	if err == nil {
		return nil
	}
	var e *elicitation.Error
	if !errors.As(err, &e) {
		return &hardError{err}
	}
	switch e.Field {
	case name:
		return errors.New(e.Msg)
	case "":
		return &hardError{err}
	}
	return nil
}

// reason is the user-facing part of an elicitation error.
func reason(err error) string {
	var e *elicitation.Error
	if errors.As(err, &e) {
		if e.Field != "" {
			return fmt.Sprintf("%s: %s", cleanLine(e.Field), cleanLine(e.Msg))
		}
		return cleanLine(e.Msg)
	}
	return cleanLine(err.Error())
}

// AskAll asks every request of an interrupt in order and returns the
// resume to continue the run with. It first prints in.Problem, when set, as
// the reason the previous answer was refused, then which tool is waiting.
//
// A Cancel (chosen, or the end of the input) abandons the whole tool call,
// so the requests after it are not asked and are answered with Cancel too.
func (p *Prompter) AskAll(ctx context.Context, in *elicitation.Interrupt) (*elicitation.Resume, error) {
	if in == nil {
		return nil, errors.New("term: nil interrupt")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if prob := strings.TrimSpace(in.Problem); prob != "" {
		p.printf("The previous answer was refused: %s\n", clean(prob))
	}
	p.printf("Tool %q needs your input:\n", cleanLine(in.ToolName))
	if in.Server != "" {
		p.printf("  (asked by server %q)\n", cleanLine(in.Server))
	}
	res := &elicitation.Resume{Responses: make(map[string]elicitation.Response, len(in.Requests))}
	cancelled := false
	for i, r := range in.Requests {
		if cancelled {
			res.Responses[r.Key] = elicitation.Response{Action: elicitation.Cancel}
			continue
		}
		if len(in.Requests) > 1 {
			p.printf("\n(%d/%d) ", i+1, len(in.Requests))
		}
		resp, err := p.Ask(ctx, r)
		if err != nil {
			return nil, err
		}
		res.Responses[r.Key] = resp
		cancelled = resp.Action == elicitation.Cancel
	}
	return res, nil
}

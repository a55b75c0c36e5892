package term

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/elicitation"
)

// bookSchema is written out of alphabetical order on purpose: the fields
// must be asked in this order.
const bookSchema = `{
  "type": "object",
  "properties": {
    "guests": {"type": "integer", "title": "Guests", "description": "How many people are coming", "minimum": 1, "maximum": 12},
    "seating": {"type": "string", "title": "Seating", "enum": ["indoor", "terrace", "bar"]},
    "vegetarian": {"type": "boolean", "title": "Vegetarian menu"},
    "notes": {"type": "string", "title": "Notes", "default": "none"}
  },
  "required": ["guests", "seating"]
}`

func bookRequest() elicitation.Request {
	return elicitation.Request{
		Key:             "k1",
		Mode:            elicitation.ModeForm,
		Message:         "Book a table at Chez Nous.",
		RequestedSchema: json.RawMessage(bookSchema),
	}
}

func ask(t *testing.T, r elicitation.Request, input string) (elicitation.Response, string, error) {
	t.Helper()
	var out bytes.Buffer
	resp, err := Ask(context.Background(), strings.NewReader(input), &out, r)
	t.Logf("transcript:\n%s", out.String())
	return resp, out.String(), err
}

func wantContent(t *testing.T, resp elicitation.Response, want map[string]any) {
	t.Helper()
	if resp.Action != elicitation.Accept {
		t.Fatalf("action = %q, want accept", resp.Action)
	}
	if !reflect.DeepEqual(resp.Content, want) {
		t.Fatalf("content = %#v\nwant      %#v", resp.Content, want)
	}
}

func TestFormByValue(t *testing.T) {
	resp, out, err := ask(t, bookRequest(), "\n4\nterrace\nyes\nwindow seat\n")
	if err != nil {
		t.Fatal(err)
	}
	wantContent(t, resp, map[string]any{"guests": int64(4), "seating": "terrace", "vegetarian": true, "notes": "window seat"})
	for _, s := range []string{
		"Book a table at Chez Nous.\n",
		"[a]ccept / [d]ecline / [c]ancel",
		"Guests (integer, 1..12, required)\n  How many people are coming\n  > ",
		"Seating (choose one, required)\n  1) indoor\n  2) terrace\n  3) bar\n  > ",
		"Vegetarian menu (yes/no, optional)\n  [y/n] > ",
		"Notes (text, optional)\n  [default none] > ",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q", s)
		}
	}
	// Document order, not alphabetical.
	order := []string{"Guests (", "Seating (", "Vegetarian menu (", "Notes ("}
	last := -1
	for _, s := range order {
		i := strings.Index(out, s)
		if i < last {
			t.Errorf("%q asked out of order", s)
		}
		last = i
	}
}

func TestFormByNumberAndDefaults(t *testing.T) {
	resp, _, err := ask(t, bookRequest(), "a\n2\n2\n\n\n")
	if err != nil {
		t.Fatal(err)
	}
	// vegetarian is optional without a default: skipped; notes takes its
	// default.
	wantContent(t, resp, map[string]any{"guests": int64(2), "seating": "terrace", "notes": "none"})
}

func TestFormBadIntegerThenGood(t *testing.T) {
	resp, out, err := ask(t, bookRequest(), "a\nfour\n20\n\n3\nBAR\nn\n\n")
	if err != nil {
		t.Fatal(err)
	}
	wantContent(t, resp, map[string]any{"guests": int64(3), "seating": "bar", "vegetarian": false, "notes": "none"})
	want := "Guests (integer, 1..12, required)\n  How many people are coming\n" +
		"  > " + `  ! "four" is not a number` + "\n" +
		"  > " + "  ! 20 is above the maximum 12\n" +
		"  > " + "  ! an answer is required\n" +
		"  > Seating"
	if !strings.Contains(out, want) {
		t.Errorf("output lacks the re-asks:\n%q", want)
	}
}

func TestFormTooManyBadAnswers(t *testing.T) {
	_, out, err := ask(t, bookRequest(), "a\n0\n0\n0\n0\n0\n4\n")
	if err == nil || !strings.Contains(err.Error(), `field "guests"`) {
		t.Fatalf("err = %v, want a too-many-tries error for guests", err)
	}
	if n := strings.Count(out, "below the minimum"); n != 4 {
		t.Errorf("%d reasons printed, want 4 (the 5th try fails the call)", n)
	}
}

func TestDeclineAndCancel(t *testing.T) {
	for in, want := range map[string]elicitation.Action{
		"d\n":       elicitation.Decline,
		"decline\n": elicitation.Decline,
		"c\n":       elicitation.Cancel,
		"x\nC\n":    elicitation.Cancel,
	} {
		resp, out, err := ask(t, bookRequest(), in)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Action != want || resp.Content != nil {
			t.Errorf("input %q: got %+v, want %s", in, resp, want)
		}
		if strings.Contains(out, "Guests") {
			t.Errorf("input %q: fields asked after %s", in, want)
		}
	}
}

func TestEOF(t *testing.T) {
	for _, in := range []string{"", "a\n4\n", "a\n4\nterr"} {
		resp, _, err := ask(t, bookRequest(), in)
		if err != nil {
			t.Fatalf("input %q: %v", in, err)
		}
		if resp.Action != elicitation.Cancel {
			t.Errorf("input %q: action %q, want cancel", in, resp.Action)
		}
	}
}

func TestLastLineWithoutNewline(t *testing.T) {
	resp, _, err := ask(t, bookRequest(), "a\n4\n1\ny\nquiet table")
	if err != nil {
		t.Fatal(err)
	}
	wantContent(t, resp, map[string]any{"guests": int64(4), "seating": "indoor", "vegetarian": true, "notes": "quiet table"})
}

func TestURLMode(t *testing.T) {
	r := elicitation.Request{
		Key:     "pay",
		Mode:    elicitation.ModeURL,
		Message: "Pay the deposit.\x1b[2J",
		URL:     "https://pay.example.com:8443/checkout?id=7",
	}
	resp, out, err := ask(t, r, "\nok\na\n")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Action != elicitation.Accept || resp.Content != nil {
		t.Errorf("got %+v, want a bare accept", resp)
	}
	for _, s := range []string{
		`Pay the deposit.\x1b[2J` + "\n",
		"Open this link on pay.example.com:8443: https://pay.example.com:8443/checkout?id=7\n",
		"Open it and continue? [a]ccept / [d]ecline / [c]ancel: ",
		"! answer a (accept), d (decline) or c (cancel)",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q", s)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Error("an escape sequence from the server reached the terminal")
	}
	if n := strings.Count(out, "Open it and continue?"); n != 3 {
		t.Errorf("asked %d times, want 3 (an empty line does not accept a URL)", n)
	}

	resp, _, _ = ask(t, r, "d\n")
	if resp.Action != elicitation.Decline {
		t.Errorf("got %+v, want decline", resp)
	}
}

func TestMultiSelect(t *testing.T) {
	r := elicitation.Request{
		Key:  "langs",
		Mode: elicitation.ModeForm,
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{
			"langs":{"type":"array","title":"Languages","minItems":1,"maxItems":2,
				"items":{"anyOf":[{"const":"fr","title":"French"},{"const":"es","title":"Spanish"},{"const":"de","title":"German"}]}}},
			"required":["langs"]}`),
	}
	resp, out, err := ask(t, r, "a\n1,2,3\n1, spanish\n")
	if err != nil {
		t.Fatal(err)
	}
	wantContent(t, resp, map[string]any{"langs": []any{"fr", "es"}})
	for _, s := range []string{
		"Languages (choose any, comma-separated, 1..2 choices, required)\n  1) French\n  2) Spanish\n  3) German\n",
		"! choose at most 2",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q", s)
		}
	}

	// items as an enum, answered by value, with a default.
	r.RequestedSchema = json.RawMessage(`{"type":"object","properties":{
		"tags":{"type":"array","items":{"type":"string","enum":["a","b","c"]},"default":["b"]}}}`)
	resp, out, err = ask(t, r, "\nc,a,c\n")
	if err != nil {
		t.Fatal(err)
	}
	wantContent(t, resp, map[string]any{"tags": []any{"c", "a"}})
	if !strings.Contains(out, "[default b] > ") {
		t.Errorf("the default is not shown")
	}
	resp, _, _ = ask(t, r, "\n\n")
	wantContent(t, resp, map[string]any{"tags": []any{"b"}})
}

func TestTitledOneOf(t *testing.T) {
	r := elicitation.Request{
		Key:  "size",
		Mode: elicitation.ModeForm,
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{
			"size":{"type":"string","title":"Size","oneOf":[
				{"const":"s","title":"Small"},{"const":"m","title":"Medium"},{"const":"l","title":"Large"}],
				"default":"m"}}}`),
	}
	resp, out, err := ask(t, r, "a\nhuge\nlarge\n")
	if err != nil {
		t.Fatal(err)
	}
	wantContent(t, resp, map[string]any{"size": "l"})
	for _, s := range []string{"  1) Small\n  2) Medium\n  3) Large\n", "[default Medium] > ", `! "huge" is not one of the choices; answer 1..3 or a value`} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q", s)
		}
	}
	for in, want := range map[string]string{"a\n1\n": "s", "a\nm\n": "m", "a\n\n": "m"} {
		resp, _, err := ask(t, r, in)
		if err != nil {
			t.Fatal(err)
		}
		wantContent(t, resp, map[string]any{"size": want})
	}
}

func TestFormatsAndNumbers(t *testing.T) {
	r := elicitation.Request{
		Key:  "f",
		Mode: elicitation.ModeForm,
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{
			"email":{"type":"string","format":"email"},
			"day":{"type":"string","format":"date"},
			"price":{"type":"number","minimum":0.5},
			"name":{"type":"string","minLength":2,"maxLength":5}},
			"required":["email","day","price","name"]}`),
	}
	resp, out, err := ask(t, r, "a\nnope\nme@example.com\n2025-13-01\n2025-12-01\nNaN\n0.1\n2.5\nx\nbob\n")
	if err != nil {
		t.Fatal(err)
	}
	wantContent(t, resp, map[string]any{"email": "me@example.com", "day": "2025-12-01", "price": 2.5, "name": "bob"})
	for _, s := range []string{
		"email (email address, required)",
		"day (date, YYYY-MM-DD, required)",
		"price (number, at least 0.5, required)",
		"name (text, 2..5 characters, required)",
		`! "nope" is not an email address`,
		`! "2025-13-01" is not a date (YYYY-MM-DD)`,
		`! "NaN" is not a number`,
		"! 0.1 is below the minimum 0.5",
		"! at least 2 characters, got 1",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q", s)
		}
	}
}

func TestFormStartsOver(t *testing.T) {
	// "ghost" is required but not a field: no answer can satisfy the form.
	r := elicitation.Request{
		Key:             "g",
		Mode:            elicitation.ModeForm,
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"required":["ghost"]}`),
	}
	_, out, err := ask(t, r, "a\nx\ny\nz\n")
	if err == nil {
		t.Fatal("no error")
	}
	if n := strings.Count(out, "starting over"); n != 2 {
		t.Errorf("started over %d times, want 2", n)
	}
	if n := strings.Count(out, "a (text, optional)"); n != 3 {
		t.Errorf("form asked %d times, want 3", n)
	}
}

func TestBadSchema(t *testing.T) {
	r := elicitation.Request{Key: "b", Mode: elicitation.ModeForm, RequestedSchema: json.RawMessage(`{"type":"array"}`)}
	if _, _, err := ask(t, r, "a\n"); err == nil {
		t.Error("no error for a non-object schema")
	}
}

func TestEmptyForm(t *testing.T) {
	r := elicitation.Request{Key: "e", Mode: elicitation.ModeForm, Message: "Confirm?"}
	resp, _, err := ask(t, r, "\n")
	if err != nil || resp.Action != elicitation.Accept {
		t.Fatalf("got %+v, %v", resp, err)
	}
}

func TestAskAll(t *testing.T) {
	in := &elicitation.Interrupt{
		Type:     elicitation.InterruptType,
		ToolName: "book",
		Server:   "resto",
		Problem:  `elicitation "k1": field "guests": 20 is above the maximum 12`,
		Requests: []elicitation.Request{
			bookRequest(),
			{Key: "pay", Mode: elicitation.ModeURL, Message: "Pay the deposit.", URL: "https://pay.example.com/x"},
		},
	}
	var out bytes.Buffer
	p := NewPrompter(strings.NewReader("hello agent\n\n5\n1\n\n\nd\nbye\n"), &out)
	ctx := context.Background()

	line, ok, err := p.Line(ctx, "you> ")
	if err != nil || !ok || line != "hello agent" {
		t.Fatalf("Line = %q, %v, %v", line, ok, err)
	}
	res, err := p.AskAll(ctx, in)
	t.Logf("transcript:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]elicitation.Response{
		"k1":  {Action: elicitation.Accept, Content: map[string]any{"guests": int64(5), "seating": "indoor", "notes": "none"}},
		"pay": {Action: elicitation.Decline},
	}
	if !reflect.DeepEqual(res.Responses, want) {
		t.Errorf("responses = %#v\nwant        %#v", res.Responses, want)
	}
	if _, err := elicitation.Check(in.Requests, res); err != nil {
		t.Errorf("the resume does not check: %v", err)
	}
	s := out.String()
	problem := strings.Index(s, "The previous answer was refused: "+in.Problem)
	tool := strings.Index(s, `Tool "book" needs your input:`)
	first := strings.Index(s, "(1/2) Book a table")
	second := strings.Index(s, "(2/2) Pay the deposit.")
	if problem < 0 || tool < problem || first < tool || second < first {
		t.Errorf("problem at %d, tool at %d, requests at %d and %d", problem, tool, first, second)
	}
	// The same buffered reader goes on after the interrupt.
	line, ok, err = p.Line(ctx, "you> ")
	if err != nil || !ok || line != "bye" {
		t.Fatalf("Line = %q, %v, %v", line, ok, err)
	}
	if _, ok, err = p.Line(ctx, "you> "); ok || err != nil {
		t.Fatalf("Line at EOF = %v, %v", ok, err)
	}
}

func TestAskAllCancelSkipsTheRest(t *testing.T) {
	in := &elicitation.Interrupt{
		ToolName: "book",
		Requests: []elicitation.Request{bookRequest(), {Key: "pay", Mode: elicitation.ModeURL, URL: "https://x.example/"}},
	}
	var out bytes.Buffer
	res, err := NewPrompter(strings.NewReader("c\n"), &out).AskAll(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Responses["k1"].Action != elicitation.Cancel || res.Responses["pay"].Action != elicitation.Cancel {
		t.Errorf("responses = %+v", res.Responses)
	}
	if strings.Contains(out.String(), "x.example") {
		t.Error("asked the second request after a cancel")
	}
}

func TestContextCancel(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	var out bytes.Buffer
	p := NewPrompter(pr, &out)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	if _, err := p.Ask(ctx, bookRequest()); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// The read left behind delivers its line to the next call.
	go func() { _, _ = pw.Write([]byte("later\n")) }()
	line, ok, err := p.Line(context.Background(), "> ")
	if err != nil || !ok || line != "later" {
		t.Fatalf("Line = %q, %v, %v", line, ok, err)
	}
	if _, _, err := p.Line(ctx, "> "); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestPropertyOrder(t *testing.T) {
	got, err := propertyOrder(json.RawMessage(`{"required":["z"],"properties":{"z":{"type":"string","properties":{"in":{}}},"a":{},"m":{"enum":[1,2]},"a":{}},"type":"object"}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"z", "a", "m"}; !reflect.DeepEqual(got, want) {
		t.Errorf("order = %q, want %q", got, want)
	}
}

func TestProgressPlain(t *testing.T) {
	var out bytes.Buffer
	p := NewProgress(&out, "search", false)
	p.Update(3, 10, "step 3")
	p.Update(0.5, 0, "")
	p.Update(10, 10, "done")
	p.Done()
	p.Update(11, 10, "late")
	want := "search: 3/10 step 3\nsearch: 0.5\nsearch: 10/10 done\n"
	if out.String() != want {
		t.Errorf("output = %q, want %q", out.String(), want)
	}
}

func TestProgressTerminal(t *testing.T) {
	var out bytes.Buffer
	p := NewProgress(&out, "search", true)
	now := time.Unix(0, 0)
	p.now = func() time.Time { return now }

	p.Update(4.5, 10, "step 4")
	p.Update(5, 10, "held back") // within 50ms: throttled
	now = now.Add(60 * time.Millisecond)
	p.Update(6, 10, "step 6")
	p.Update(10, 10, "finished") // final: drawn at once
	p.Done()
	want := "\r\x1b[2Ksearch [#########-----------] 45% step 4" +
		"\r\x1b[2Ksearch [############--------] 60% step 6" +
		"\r\x1b[2Ksearch [####################] 100% finished\n"
	if out.String() != want {
		t.Errorf("output = %q\nwant     %q", out.String(), want)
	}

	// Without a total: a turning bar and the count; Done draws the update
	// held back.
	out.Reset()
	p = NewProgress(&out, "load", true)
	p.now = func() time.Time { return now }
	p.Update(1, 0, "a")
	p.Update(2, 0, "b")
	p.Done()
	want = "\r\x1b[2Kload [|] 1 a\r\x1b[2Kload [/] 2 b\n"
	if out.String() != want {
		t.Errorf("output = %q\nwant     %q", out.String(), want)
	}
}

func TestProgressOddNumbers(t *testing.T) {
	var out bytes.Buffer
	p := NewProgress(&out, "x", true)
	p.now = func() time.Time { return time.Unix(0, 0) }
	p.Update(math.NaN(), 10, "")
	p.Update(-3, 10, "")
	p.Update(math.Inf(1), 10, "")
	p.Done()
	want := "\r\x1b[2Kx [--------------------] 0%\r\x1b[2Kx [####################] 100%\n"
	if out.String() != want {
		t.Errorf("output = %q\nwant     %q", out.String(), want)
	}
}

func TestProgressConcurrent(t *testing.T) {
	var out bytes.Buffer
	p := NewProgress(&out, "x", true)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				p.Update(float64(i*50+j), 400, "m")
			}
		})
	}
	wg.Wait()
	p.Done()
	if !strings.HasSuffix(out.String(), "\n") {
		t.Error("Done did not end the line")
	}
}

func TestIsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Error("a regular file is a terminal")
	}
	if IsTerminal(nil) {
		t.Error("nil is a terminal")
	}
}

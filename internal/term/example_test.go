package term_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/term"
)

// echo plays a terminal's local echo: it hands the typed input over one
// byte at a time and writes each byte to out as it is read, showing an
// empty line as "(Enter)".
type echo struct {
	in    io.Reader
	out   io.Writer
	typed bool // something was typed on this line
}

func (e *echo) Read(p []byte) (int, error) {
	n, err := e.in.Read(p[:min(len(p), 1)])
	if n == 1 && p[0] == '\n' && !e.typed {
		io.WriteString(e.out, "(Enter)")
	}
	e.typed = n == 1 && p[0] != '\n'
	e.out.Write(p[:n])
	return n, err
}

func ExamplePrompter_Ask() {
	req := elicitation.Request{
		Key:     "k1",
		Mode:    elicitation.ModeForm,
		Message: "Book a table at Chez Nous.",
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{
			"guests":{"type":"integer","title":"Guests","description":"How many people are coming","minimum":1,"maximum":12},
			"seating":{"type":"string","title":"Seating","oneOf":[{"const":"in","title":"Indoor"},{"const":"out","title":"Terrace"}]},
			"vegetarian":{"type":"boolean","title":"Vegetarian menu"},
			"notes":{"type":"string","title":"Notes","default":"none"}},
			"required":["guests","seating"]}`),
	}
	typed := "\n20\n4\n2\ny\n\n"
	p := term.NewPrompter(&echo{in: strings.NewReader(typed), out: os.Stdout}, os.Stdout)
	resp, err := p.Ask(context.Background(), req)
	if err != nil {
		panic(err)
	}
	b, _ := json.Marshal(resp)
	fmt.Println(string(b))
	// Output:
	// Book a table at Chez Nous.
	// Respond? [a]ccept / [d]ecline / [c]ancel (Enter accepts): (Enter)
	// Guests (integer, 1..12, required)
	//   How many people are coming
	//   > 20
	//   ! 20 is above the maximum 12
	//   > 4
	// Seating (choose one, required)
	//   1) Indoor
	//   2) Terrace
	//   > 2
	// Vegetarian menu (yes/no, optional)
	//   [y/n] > y
	// Notes (text, optional)
	//   [default none] > (Enter)
	// {"action":"accept","content":{"guests":4,"notes":"none","seating":"out","vegetarian":true}}
}

package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	gk "github.com/firebase/genkit/go/genkit"
)

// TestTranscript runs the agent against the scripted model and checks the
// transcript: three parallel requests, the server's question as an
// interrupt, the answer, the tool error the model reads, the summary and
// the structured content.
func TestTranscript(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g := gk.Init(ctx)
	var out bytes.Buffer
	if err := Run(ctx, &out, g, DefineScripted(g), Prompt, 3); err != nil {
		t.Fatal(err)
	}
	want := `user: Plan Friday: the weather in Paris and in Berlin, and a table for us at Chez Marie.
model calls forecast {"city":"Paris"}
model calls forecast {"city":"Berlin"}
model calls book_table {"date":"Friday","restaurant":"Chez Marie"}
server asks the user (book_table, a Genkit interrupt): How many guests at Chez Marie on Friday?
user answers: {"guests":3}
tool forecast: Paris: sunny, high 24°C
tool forecast: Error: no forecast for "Berlin": only Paris and Lyon are covered
tool book_table: Booked 3 at Chez Marie on Friday.
model: Here is Friday. Paris: sunny, high 24°C Error: no forecast for "Berlin": only Paris and Lyon are covered Booked 3 at Chez Marie on Friday.
  (structured content for the application: forecast {"city":"Paris","conditions":"sunny","highC":24})
`
	if got := out.String(); got != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
	}
}

package main

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// TestTranscript runs the loop against the scripted model and checks the
// transcript: three parallel calls, the tool error the model reads, the
// structured content, the server's question, the answer and the summary.
func TestTranscript(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	if err := Run(ctx, &out, Scripted{}, Prompt, 3); err != nil {
		t.Fatal(err)
	}
	want := `user: Plan Friday: the weather in Paris and in Berlin, and a table for us at Chez Marie.
model calls forecast {"city":"Paris"}
model calls forecast {"city":"Berlin"}
model calls book_table {"restaurant":"Chez Marie","date":"Friday"}
tool forecast: Paris: sunny, high 24°C
  (structured content for the application: {"city":"Paris","conditions":"sunny","highC":24})
tool forecast: Error: no forecast for "Berlin": only Paris and Lyon are covered
server asks the user (book_table): How many guests at Chez Marie on Friday?
user answers: {"guests":3}
tool book_table: Booked 3 at Chez Marie on Friday.
model: Here is Friday. Paris: sunny, high 24°C Error: no forecast for "Berlin": only Paris and Lyon are covered Booked 3 at Chez Marie on Friday.
`
	if got := out.String(); got != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
	}
}

package openai_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/mcpadapter/mcpadapter/openai"
)

// TestResultLimit: a result over Options.MaxResultBytes reaches the model
// cut, with the note, in both the chat message and the Responses item;
// the Outcome's Result keeps it whole.
func TestResultLimit(t *testing.T) {
	ts := toolsetOf(t, testserver.New(testserver.Options{}), &mcpadapter.Options{MaxResultBytes: 1000})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	outs, err := ts.Run(ctx, []openai.Call{{ID: "c1", Name: "long_text", Arguments: `{"bytes":50000}`}})
	if err != nil {
		t.Fatal(err)
	}
	if got := outs[0].Text(); len(got) > 1000 || !strings.Contains(got, "… truncated: ") || !strings.Contains(got, " of 50000 bytes shown") {
		t.Errorf("Text: %d bytes: %.80q…", len(got), got)
	}
	if len(outs[0].Result.FullText()) != 50000 {
		t.Errorf("the Result lost its text: %d bytes", len(outs[0].Result.FullText()))
	}
	item, _ := json.Marshal(outs[0].ResponseItem())
	if len(item) > 1500 || !strings.Contains(string(item), "truncated: ") {
		t.Errorf("response item: %d bytes", len(item))
	}
}

package argplan

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCheckNamesTheModelsArguments: a problem names the argument as the
// model wrote it, through the plan's renames and then modelPath; valid
// arguments, arguments that are not an object and an unreadable schema
// give no message.
func TestCheckNamesTheModelsArguments(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"people":{"type":"integer","minimum":1},"room":{"type":"string"}},"required":["room"]}`)
	_, plan, err := Transform(schema, map[string]*Arg{"people": {Name: "attendees"}})
	if err != nil {
		t.Fatal(err)
	}
	c := NewChecker(schema)
	msg := c.Check("book", json.RawMessage(`{"room":"Ada","people":0}`), plan, nil)
	if !strings.Contains(msg, `tool "book"`) || !strings.Contains(msg, "$.attendees: expected a number >= 1, got 0") {
		t.Fatalf("renamed: %q", msg)
	}
	msg = c.Check("book", json.RawMessage(`{"room":"Ada","people":0}`), plan, func(p string) string { return "/args" + p })
	if !strings.Contains(msg, "$.args.attendees") {
		t.Fatalf("modelPath: %q", msg)
	}
	for _, args := range []string{`{"room":"Ada","people":2}`, `[1]`} {
		if msg := c.Check("book", json.RawMessage(args), plan, nil); msg != "" {
			t.Errorf("%s: %q", args, msg)
		}
	}
	if msg := NewChecker(json.RawMessage(`not json`)).Check("book", json.RawMessage(`{"people":0}`), nil, nil); msg != "" {
		t.Errorf("unreadable schema: %q", msg)
	}
	if msg := (*Checker)(nil).Check("book", json.RawMessage(`{"people":0}`), nil, nil); msg != "" {
		t.Errorf("nil checker: %q", msg)
	}
}

package elicitation

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

const bookingSchema = `{
	"type": "object",
	"properties": {
		"guests":   {"type": "integer", "minimum": 1, "maximum": 12},
		"name":     {"type": "string", "minLength": 2, "maxLength": 40},
		"email":    {"type": "string", "format": "email"},
		"date":     {"type": "string", "format": "date"},
		"seating":  {"type": "string", "enum": ["inside", "terrace"], "default": "inside"},
		"course":   {"type": "string", "oneOf": [{"const": "veg", "title": "Vegetarian"}, {"const": "fish", "title": "Fish"}]},
		"extras":   {"type": "array", "items": {"type": "string", "enum": ["wine", "cake"]}, "maxItems": 2},
		"reminder": {"type": "boolean", "default": true},
		"budget":   {"type": "number", "minimum": 0}
	},
	"required": ["guests", "name"]
}`

func form() Request {
	return Request{Key: "booking", Mode: ModeForm, Message: "Book?", RequestedSchema: json.RawMessage(bookingSchema)}
}

func TestFormAccepted(t *testing.T) {
	got, err := form().Check(Response{Action: Accept, Content: map[string]any{
		"guests": float64(4), "name": "Ada", "email": "ada@example.com", "date": "2026-12-24",
		"course": "fish", "extras": []any{"wine"}, "budget": json.Number("80.5"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"guests": int64(4), "name": "Ada", "email": "ada@example.com", "date": "2026-12-24",
		"course": "fish", "extras": []any{"wine"}, "budget": 80.5,
		"seating": "inside", "reminder": true, // defaults (SEP-1034)
	}
	if !reflect.DeepEqual(got.Content, want) {
		t.Errorf("content\n got %#v\nwant %#v", got.Content, want)
	}
}

func TestFormRejected(t *testing.T) {
	for _, tc := range []struct {
		content map[string]any
		field   string
		msg     string
	}{
		{map[string]any{"name": "Ada"}, "guests", "required"},
		{map[string]any{"guests": "four", "name": "Ada"}, "guests", `want an integer, got the string "four"`},
		{map[string]any{"guests": 2.5, "name": "Ada"}, "guests", "want an integer"},
		{map[string]any{"guests": 13, "name": "Ada"}, "guests", "above the maximum 12"},
		{map[string]any{"guests": 0, "name": "Ada"}, "guests", "below the minimum 1"},
		{map[string]any{"guests": 2, "name": "A"}, "name", "at least 2 characters"},
		{map[string]any{"guests": 2, "name": "Ada", "email": "not-an-email"}, "email", "not an email address"},
		{map[string]any{"guests": 2, "name": "Ada", "date": "24/12/2026"}, "date", "not a date"},
		{map[string]any{"guests": 2, "name": "Ada", "seating": "roof"}, "seating", `"roof" is not one of "inside", "terrace"`},
		{map[string]any{"guests": 2, "name": "Ada", "course": "beef"}, "course", "not one of"},
		{map[string]any{"guests": 2, "name": "Ada", "extras": []any{"wine", "cake", "wine"}}, "extras", "at most 2"},
		{map[string]any{"guests": 2, "name": "Ada", "extras": []any{"cheese"}}, "extras", "not one of"},
		{map[string]any{"guests": 2, "name": "Ada", "reminder": "yes"}, "reminder", "want true or false"},
		{map[string]any{"guests": 2, "name": "Ada", "pets": 1}, "pets", "not a field of this form"},
	} {
		_, err := form().Check(Response{Action: Accept, Content: tc.content})
		var e *Error
		if !errors.As(err, &e) || e.Key != "booking" || e.Field != tc.field || !strings.Contains(e.Msg, tc.msg) {
			t.Errorf("%v: got %v, want field %q: %q", tc.content, err, tc.field, tc.msg)
		}
	}
}

func TestActions(t *testing.T) {
	r := form()
	for _, a := range []Action{Decline, Cancel} {
		got, err := r.Check(Response{Action: a, Content: map[string]any{"ignored": 1}})
		if err != nil || got.Action != a || got.Content != nil {
			t.Errorf("%s: %+v %v", a, got, err)
		}
	}
	if _, err := r.Check(Response{Action: "maybe"}); err == nil || !strings.Contains(err.Error(), "accept, decline or cancel") {
		t.Errorf("bad action: %v", err)
	}
	u := Request{Key: "login", Mode: ModeURL, URL: "https://example.com/auth"}
	if got, err := u.Check(Response{Action: Accept}); err != nil || got.Action != Accept {
		t.Errorf("url accept: %+v %v", got, err)
	}
	if _, err := u.Check(Response{Action: Accept, Content: map[string]any{"x": 1}}); err == nil {
		t.Error("url accept with content: no error")
	}
}

func TestCheckResume(t *testing.T) {
	reqs := []Request{form(), {Key: "login", Mode: ModeURL, URL: "https://example.com"}}
	_, err := Check(reqs, &Resume{Responses: map[string]Response{"booking": {Action: Decline}}})
	if err == nil || !strings.Contains(err.Error(), `"login"`) {
		t.Errorf("missing response: %v", err)
	}
	_, err = Check(reqs, &Resume{Responses: map[string]Response{"booking": {Action: Decline}, "login": {Action: Accept}, "other": {Action: Accept}}})
	if err == nil || !strings.Contains(err.Error(), "no such request") {
		t.Errorf("extra response: %v", err)
	}
	got, err := Check(reqs, &Resume{Responses: map[string]Response{"booking": {Action: Decline}, "login": {Action: Accept}}})
	if err != nil || len(got) != 2 {
		t.Errorf("good resume: %v %v", got, err)
	}
}

func TestJSONShape(t *testing.T) {
	in := Interrupt{Type: InterruptType, ToolName: "book", Requests: []Request{form()}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"type":"mcp_elicitation"`, `"tool_name":"book"`, `"requests":[{"key":"booking","mode":"form"`, `"requested_schema":{`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	var r Resume
	if err := json.Unmarshal([]byte(`{"responses":{"booking":{"action":"accept","content":{"guests":4}}}}`), &r); err != nil || r.Responses["booking"].Content["guests"] != float64(4) {
		t.Errorf("resume: %+v %v", r, err)
	}
}

func TestGob(t *testing.T) {
	var buf bytes.Buffer
	var v any = &Resume{Responses: map[string]Response{"k": {Action: Accept, Content: map[string]any{"n": 1.0, "l": []any{"a"}}}}}
	if err := gob.NewEncoder(&buf).Encode(&v); err != nil {
		t.Fatal(err)
	}
	var back any
	if err := gob.NewDecoder(&buf).Decode(&back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, v) {
		t.Errorf("gob round trip: %#v", back)
	}
}

func FuzzCheck(f *testing.F) {
	f.Add(bookingSchema, `{"guests":4,"name":"Ada"}`)
	f.Add(`{"type":"object","properties":{"a":{"type":"array","items":{"anyOf":[{"const":"x"}]}}}}`, `{"a":["x"]}`)
	f.Add(`{}`, `{}`)
	f.Add(`{"type":"string"}`, `{"a":1}`)
	f.Fuzz(func(t *testing.T, schema, content string) {
		var c map[string]any
		if json.Unmarshal([]byte(content), &c) != nil {
			return
		}
		r := Request{Key: "k", Mode: ModeForm, RequestedSchema: json.RawMessage(schema)}
		got, err := r.Check(Response{Action: Accept, Content: c})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Key != "k" {
				t.Fatalf("error %v is not an *Error for key k", err)
			}
			return
		}
		if _, err := json.Marshal(got.Content); err != nil {
			t.Fatalf("accepted content does not marshal: %v", err)
		}
	})
}

package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/bindingtest"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/gemini"
	"github.com/mcpadapter/mcpadapter/internal/schemacheck"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/mcpadapter/mcpadapter/schemaprofile"
	"google.golang.org/genai"
)

var eras = []testserver.Era{testserver.Modern, testserver.Legacy}

func toolset(t *testing.T, era testserver.Era, opts *mcpadapter.Options, gopts *gemini.Options) *gemini.Toolset {
	t.Helper()
	return toolsetOf(t, testserver.New(testserver.Options{Era: era}), opts, gopts)
}

func toolsetOf(t *testing.T, target any, opts *mcpadapter.Options, gopts *gemini.Options) *gemini.Toolset {
	t.Helper()
	ts, err := gemini.New(bindingtest.Tools(t, target, opts), gopts)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// lower undoes the upper-casing of type names, to compare a
// genai.Schema with the profile's output.
func lower(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k == "type" {
				if s, ok := x.(string); ok {
					v[k] = strings.ToLower(s)
				}
				continue
			}
			if k == "properties" {
				for pk, px := range x.(map[string]any) {
					x.(map[string]any)[pk] = lower(px)
				}
				continue
			}
			v[k] = lower(x)
		}
	case []any:
		for i := range v {
			v[i] = lower(v[i])
		}
	}
	return v
}

func canon(t *testing.T, data []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(lower(v))
	return string(out)
}

// TestDeclarations: every tool of both eras becomes a declaration whose
// Parameters is the Gemini profile's output, valid under Gemini's rules,
// with nothing lost on the way into genai.Schema.
func TestDeclarations(t *testing.T) {
	for _, era := range eras {
		t.Run(era.String(), func(t *testing.T) {
			ts := toolset(t, era, nil, nil)
			decls := ts.FunctionDeclarations()
			if len(decls) < 10 {
				t.Fatalf("%d declarations", len(decls))
			}
			for _, d := range decls {
				prof := ts.Profile(d.Name).Schema
				if p := schemacheck.Gemini(prof); len(p) > 0 {
					t.Errorf("%s: %s: %v", d.Name, prof, p)
				}
				if !strings.Contains(string(prof), `"properties":{"`) {
					// No arguments: Gemini rejects an OBJECT without
					// properties, so no parameters are sent.
					if d.Parameters != nil || d.ParametersJsonSchema != nil {
						t.Errorf("%s: parameters %+v for a tool without arguments", d.Name, d.Parameters)
					}
					continue
				}
				if d.Parameters == nil || d.Parameters.Type != genai.TypeObject || d.ParametersJsonSchema != nil {
					t.Errorf("%s: parameters %+v", d.Name, d.Parameters)
					continue
				}
				got, _ := json.Marshal(d.Parameters)
				if canon(t, got) != canon(t, prof) {
					t.Errorf("%s: genai.Schema %s, profile %s", d.Name, got, prof)
				}
			}
			schema := ts.Profile("schema")
			var s *genai.Schema
			for _, d := range decls {
				if d.Name == "schema" {
					s = d.Parameters
				}
			}
			if s == nil || s.Properties["target"] == nil || s.Properties["target"].Properties["host"].Type != genai.TypeString {
				t.Errorf("schema tool: $ref not inlined: %+v (changes %v)", s, schema.Changes)
			}
		})
	}
}

func TestVerbatim(t *testing.T) {
	ts := toolset(t, testserver.Modern, nil, &gemini.Options{Profile: schemaprofile.Verbatim})
	for _, d := range ts.FunctionDeclarations() {
		if d.Name != "schema" {
			continue
		}
		if d.Parameters != nil || string(d.ParametersJsonSchema.(json.RawMessage)) != testserver.SchemaInput {
			t.Errorf("verbatim: %+v", d)
		}
		return
	}
	t.Fatal("no schema tool")
}

func TestSchemaErrors(t *testing.T) {
	_, _, err := gemini.Schema(json.RawMessage(`{"type":"object","properties":{"a/b":{"type":"date"}}}`))
	var se *gemini.SchemaError
	if !errors.As(err, &se) || se.Path != "/properties/a~1b/type" {
		t.Errorf("err %v, want a SchemaError at /properties/a~1b/type", err)
	}
	if _, _, err := gemini.Schema(json.RawMessage(`{"type":"object","$ref":"#/x"}`)); !errors.As(err, &se) || !strings.Contains(err.Error(), "$ref") {
		t.Errorf("unknown keyword: %v", err)
	}
	if _, err := gemini.New(nil, &gemini.Options{Profile: schemaprofile.OpenAI}); err == nil {
		t.Error("New with the openai profile: no error")
	}
}

// TestSchemaNumbers: a bound genai.Schema cannot hold goes into the
// description, and the change is listed on the tool's profile.
func TestSchemaNumbers(t *testing.T) {
	tool := &mcpadapter.Tool{Server: "s", Name: "big", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"n":{"type":"integer","description":"N.","minimum":1e400,"maximum":5,"minItems":1.5}}}`)}
	ts, err := gemini.New([]*mcpadapter.Tool{tool}, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := ts.FunctionDeclarations()[0].Parameters.Properties["n"]
	if n.Minimum != nil || n.Maximum == nil || *n.Maximum != 5 || !strings.Contains(n.Description, "minimum: 1e400") {
		t.Errorf("n = %+v", n)
	}
	var found bool
	for _, c := range ts.Profile("big").Changes {
		found = found || (c.Rule == schemaprofile.RuleToDescription && c.Path == "/properties/n/minimum")
	}
	if !found {
		t.Errorf("changes %v: want minimum at /properties/n/minimum", ts.Profile("big").Changes)
	}
}

// field is the string under key in a FunctionResponse's response ("" when
// there is none).
func field(fr map[string]any, key string) string {
	r, _ := fr["response"].(map[string]any)
	s, _ := r[key].(string)
	return s
}

func response(t *testing.T, o gemini.Outcome) map[string]any {
	t.Helper()
	data, err := json.Marshal(o.Part())
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		FR map[string]any `json:"functionResponse"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m.FR
}

// TestRun runs one turn of several calls at once against both eras:
// text, a tool error, an image, an unknown function and an error with
// structured content.
func TestRun(t *testing.T) {
	for _, era := range eras {
		t.Run(era.String(), func(t *testing.T) {
			ts := toolset(t, era, nil, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			outs, err := ts.Run(ctx, []gemini.Call{
				{ID: "f1", Name: "echo", Args: map[string]any{"text": "hi"}},
				{ID: "f2", Name: "fail", Args: map[string]any{"message": "boom"}},
				{ID: "f3", Name: "image"},
				{ID: "f4", Name: "nope"},
				{ID: "f5", Name: "fail_structured"},
			})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if fr := response(t, outs[0]); fr["id"] != "f1" || fr["name"] != "echo" || !reflect.DeepEqual(fr["response"], map[string]any{"output": "hi"}) {
				t.Errorf("echo %v", fr)
			}
			if fr := response(t, outs[1]); !strings.Contains(field(fr, "error"), "boom") {
				t.Errorf("fail %v", fr)
			}
			fr := response(t, outs[2])
			parts, _ := fr["parts"].([]any)
			if len(parts) != 1 || !strings.Contains(field(fr, "output"), "image-1.png") {
				t.Fatalf("image %v", fr)
			}
			inline, _ := parts[0].(map[string]any)["inlineData"].(map[string]any)
			if inline["mimeType"] != "image/png" || inline["data"] == "" || inline["displayName"] != "image-1.png" {
				t.Errorf("image part %v", inline)
			}
			if fr := response(t, outs[3]); !strings.Contains(field(fr, "error"), `unknown function "nope"`) {
				t.Errorf("nope %v", fr)
			}
			if outs[4].Result == nil || !outs[4].Result.IsError || outs[4].Result.Artifact == nil {
				t.Errorf("fail_structured: %+v, want an error result with its artifact", outs[4].Result)
			}
			c := gemini.UserContent(outs)
			if c.Role != genai.RoleUser || len(c.Parts) != 5 || c.Parts[2].FunctionResponse.ID != "f3" {
				t.Errorf("user content %+v", c)
			}
		})
	}
}

// TestCalls reads the function calls of a generateContent response.
func TestCalls(t *testing.T) {
	var resp genai.GenerateContentResponse
	reply := `{"candidates":[{"content":{"role":"model","parts":[{"text":"Looking."},
		{"functionCall":{"id":"a","name":"echo","args":{"text":"x"}}},
		{"functionCall":{"name":"add","args":{"a":1,"b":2}}}]}}]}`
	if err := json.Unmarshal([]byte(reply), &resp); err != nil {
		t.Fatal(err)
	}
	calls := gemini.Calls(&resp)
	if len(calls) != 2 || calls[0].ID != "a" || calls[1].Name != "add" || calls[1].Args["b"] != 2.0 {
		t.Errorf("calls %+v", calls)
	}
}

// TestRunTransportFailure: a server process that dies mid-call is a Go
// error (a CallError naming the call and the server), not a result.
func TestRunTransportFailure(t *testing.T) {
	ts := toolsetOf(t, mcpadapter.Command{Path: testserver.Build(t)}, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	outs, err := ts.Run(ctx, []gemini.Call{{ID: "f1", Name: "crash"}})
	var ce *gemini.CallError
	if !errors.As(err, &ce) || ce.Call.ID != "f1" {
		t.Fatalf("err = %v, want a CallError for f1", err)
	}
	if outs[0].Err == nil || !strings.Contains(err.Error(), "mcptestserver") {
		t.Errorf("outcome %+v, err %v: want the failure naming the server", outs[0], err)
	}
	if fr := response(t, outs[0]); field(fr, "error") == "" {
		t.Errorf("transport failure response %v, want error", fr)
	}
}

func TestElicitationResume(t *testing.T) {
	for _, era := range eras {
		t.Run(era.String(), func(t *testing.T) {
			ts := toolset(t, era, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			outs, err := ts.Run(ctx, []gemini.Call{{ID: "f1", Name: "book", Args: map[string]any{"date": "Fri"}}})
			if err != nil {
				t.Fatal(err)
			}
			p := outs[0].Pending
			if p == nil || len(p.Requests) != 1 {
				t.Fatalf("outcome %+v, want pending", outs[0])
			}
			out, err := ts.Resume(ctx, outs[0], &elicitation.Resume{Responses: map[string]elicitation.Response{
				p.Requests[0].Key: {Action: elicitation.Accept, Content: map[string]any{"guests": 4}}}})
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := out.FunctionResponse().Response["output"].(string); !strings.Contains(got, "Booked 4 guests") {
				t.Errorf("after resume: %v", out.FunctionResponse().Response)
			}
		})
	}
}

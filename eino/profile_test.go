package eino_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/cloudwego/eino/schema"
	"github.com/mcpadapter/mcpadapter/eino"
	"github.com/mcpadapter/mcpadapter/internal/schemacheck"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/mcpadapter/mcpadapter/schemaprofile"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// validators check a profile's output against the provider's rules.
var validators = map[schemaprofile.Profile]func([]byte) []schemacheck.Problem{
	schemaprofile.OpenAI:       schemacheck.OpenAI,
	schemaprofile.OpenAIStrict: schemacheck.OpenAIStrict,
	schemaprofile.Anthropic:    schemacheck.Anthropic,
	schemaprofile.Gemini:       schemacheck.Gemini,
}

// TestToolsProfiles: with each profile, every tool of both eras' test
// servers becomes an eino tool whose parameters, as eino marshals them,
// pass that provider's validator; without a profile (the default) the
// parameters are the normalised server schema, as before profiles.
func TestToolsProfiles(t *testing.T) {
	for _, era := range eras {
		tools := adapterTools(t, testserver.New(testserver.Options{Era: era}), nil)
		for _, p := range append([]schemaprofile.Profile{""}, schemaprofile.Profiles()...) {
			t.Run(fmt.Sprintf("%s/%s", era, p), func(t *testing.T) {
				wrapped, skipped := eino.ToolsWith(tools, &eino.ToolOptions{Profile: p})
				if len(skipped) > 0 {
					t.Fatalf("skipped %v", skipped)
				}
				for i, bt := range wrapped {
					et := bt.(*eino.Tool)
					info, err := et.Info(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					js, err := info.ParamsOneOf.ToJSONSchema()
					if err != nil {
						t.Fatal(err)
					}
					got, err := json.Marshal(js)
					if err != nil {
						t.Fatal(err)
					}
					if p == "" {
						want, err := eino.NormalizeSchema(tools[i].InputSchema)
						if err != nil {
							t.Fatal(err)
						}
						if !sameJSON(t, got, want) || et.Profile() != nil {
							t.Errorf("%s without a profile: %s, want %s", info.Name, got, want)
						}
						continue
					}
					if et.Profile() == nil || et.Profile().Profile != p {
						t.Errorf("%s: Profile() = %+v", info.Name, et.Profile())
					}
					if check := validators[p]; check != nil {
						if probs := check(got); len(probs) > 0 {
							t.Errorf("%s: %s rejects %s: %v", info.Name, p, got, probs)
						}
					}
				}
			})
		}
	}
}

// TestAgentProfileRestore: with the Anthropic profile a property name
// Anthropic refuses is renamed for the model, and the call reaches the
// server under its own name.
func TestAgentProfileRestore(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "odd", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "greet", Description: "Greet someone.", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"first name":{"type":"string"}},"required":["first name"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in map[string]any
			_ = json.Unmarshal(req.Params.Arguments, &in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("hello %v", in["first name"])}}}, nil
		})
	tools := adapterTools(t, srv, nil)
	wrapped, _ := eino.ToolsWith(tools, &eino.ToolOptions{Profile: schemaprofile.Anthropic})
	info, err := wrapped[0].Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	js, _ := info.ParamsOneOf.ToJSONSchema()
	var renamed string
	for pair := js.Properties.Oldest(); pair != nil; pair = pair.Next() {
		renamed = pair.Key
	}
	if renamed == "" || renamed == "first name" {
		t.Fatalf("property %q, want it renamed", renamed)
	}
	a, err := eino.NewAgent(context.Background(), &scripted{rounds: [][]schema.ToolCall{{
		call("c1", "greet", `{"`+renamed+`":"Ada"}`)}}}, tools, eino.AgentConfig{Profile: schemaprofile.Anthropic})
	if err != nil {
		t.Fatal(err)
	}
	r := drain(t, a.Query(ctx30(t), "run-1", "greet Ada"))
	if r.err != nil || r.final != "final: greet: hello Ada" {
		t.Errorf("run: final %q, err %v", r.final, r.err)
	}
}

// sameJSON compares JSON values, object key order aside, numbers exactly.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	for _, x := range []struct {
		data []byte
		v    *any
	}{{a, &va}, {b, &vb}} {
		dec := json.NewDecoder(bytes.NewReader(x.data))
		dec.UseNumber()
		if err := dec.Decode(x.v); err != nil {
			t.Fatal(err)
		}
	}
	return reflect.DeepEqual(va, vb)
}

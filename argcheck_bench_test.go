package mcpadapter_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/argcheck"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Two real input schemas (from toolsearch/testdata/catalog): GitHub's
// create_issue (draft-07, 7 properties) and Chrome DevTools' emulate
// (2020-12, 12 properties with enums and bounds), each with arguments
// that pass.
var argCheckCases = []struct {
	tool   string
	schema string
	args   string
	bad    string
}{
	{"create_issue",
		`{"type":"object","properties":{"owner":{"type":"string"},"repo":{"type":"string"},"title":{"type":"string"},"body":{"type":"string"},"assignees":{"type":"array","items":{"type":"string"}},"milestone":{"type":"number"},"labels":{"type":"array","items":{"type":"string"}}},"required":["owner","repo","title"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`,
		`{"owner":"acme","repo":"web","title":"Login fails on Safari","body":"Steps: open /login in Safari 17, submit.","assignees":["ada","lin"],"labels":["bug","p1"],"milestone":4}`,
		`{"owner":"acme","title":7}`},
	{"emulate",
		`{"type":"object","$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"pageId":{"type":"number"},"networkConditions":{"type":"string","enum":["Offline","Slow 3G","Fast 3G","Slow 4G","Fast 4G"]},"cpuThrottlingRate":{"type":"number","minimum":1,"maximum":20},"geolocation":{"type":"string"},"userAgent":{"type":"string"},"colorScheme":{"type":"string","enum":["dark","light","auto"]},"forcedColors":{"type":"string","enum":["active","none","auto"]},"prefersContrast":{"type":"string","enum":["more","less","custom","no-preference","auto"]},"prefersReducedMotion":{"type":"string","enum":["reduce","no-preference","auto"]},"viewport":{"type":"string"},"extraHttpHeaders":{"type":"string"}},"required":["pageId"],"additionalProperties":false}`,
		`{"pageId":2,"networkConditions":"Slow 4G","cpuThrottlingRate":4,"colorScheme":"dark","prefersReducedMotion":"reduce","viewport":"390x844x3,mobile,touch","geolocation":"41.9,12.5"}`,
		`{"pageId":2,"cpuThrottlingRate":40}`},
}

// BenchmarkArgumentCheck: one Tool.Call to an in-process server with the
// argument check (the compiled schema reused from call to call) and with
// SkipArgumentCheck, for two real schemas, and the check alone
// (argcheck.Schema.Validate of a compiled schema). The check's cost per
// call is the ratio of checked to unchecked (and of the check alone to an
// unchecked call); docs/dev/benchmarks.md reports it.
func BenchmarkArgumentCheck(b *testing.B) {
	for _, c := range argCheckCases {
		b.Run(c.tool+"/validate", func(b *testing.B) {
			s, err := argcheck.Compile(json.RawMessage(c.schema))
			if err != nil {
				b.Fatal(err)
			}
			if s.Validate(json.RawMessage(c.bad)) == nil {
				b.Fatal("invalid arguments pass")
			}
			args := json.RawMessage(c.args)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := s.Validate(args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	for _, c := range argCheckCases {
		srv.AddTool(&mcp.Tool{Name: c.tool, InputSchema: json.RawMessage(c.schema)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
	}
	for _, c := range argCheckCases {
		for _, mode := range []string{"checked", "unchecked"} {
			b.Run(c.tool+"/"+mode, func(b *testing.B) {
				ctx := context.Background()
				client, err := mcpadapter.NewClient(srv, &mcpadapter.ClientOptions{Name: "bench"})
				if err != nil {
					b.Fatal(err)
				}
				a, err := mcpadapter.New(client, &mcpadapter.Options{Transforms: map[string]*mcpadapter.ServerTransform{
					"bench": {SkipArgumentCheck: mode == "unchecked"}}})
				if err != nil {
					b.Fatal(err)
				}
				defer a.Close()
				tools, err := a.Tools(ctx)
				if err != nil {
					b.Fatal(err)
				}
				var tool *mcpadapter.Tool
				for _, t := range tools {
					if t.Name == c.tool {
						tool = t
					}
				}
				// The check is on exactly when it should be.
				res, err := tool.Call(ctx, json.RawMessage(c.bad))
				if err != nil || res.IsError != (mode == "checked") {
					b.Fatalf("%s: invalid arguments gave %v, %+v", mode, err, res)
				}
				args := json.RawMessage(c.args)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					res, err := tool.Call(ctx, args)
					if err != nil || res.IsError {
						b.Fatal(err, res)
					}
				}
			})
		}
	}
}

package wire

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolSchemas checks that the schemas as written win over go-sdk's
// decoding, that go-sdk's is used for a tool the observer did not see,
// and the defaults for a tool without schemas.
func TestToolSchemas(t *testing.T) {
	o := NewObserver("srv", nil)
	req := request(t, 1, "tools/list", `{}`)
	o.Sent(req, nil)
	o.Received(response(req, listAnswer), nil)

	decoded := map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "integer"}}}
	in, out, err := o.ToolSchemas(&mcp.Tool{Name: "sum", InputSchema: decoded, OutputSchema: decoded})
	if err != nil || string(in) != `{"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"integer","maximum":12345678901234567890}}}` || string(out) != `{"type":"object"}` {
		t.Errorf("sum: %s, %s, %v; want the schemas as written", in, out, err)
	}
	in, out, err = o.ToolSchemas(&mcp.Tool{Name: "unseen", InputSchema: decoded})
	if err != nil || string(in) != `{"properties":{"a":{"type":"integer"}},"type":"object"}` || out != nil {
		t.Errorf("unseen: %s, %s, %v; want go-sdk's input schema and no output schema", in, out, err)
	}
	var none *Observer
	in, out, err = none.ToolSchemas(&mcp.Tool{Name: "bare"})
	if err != nil || string(in) != `{"type":"object"}` || out != nil {
		t.Errorf("bare: %s, %s, %v; want the default input schema", in, out, err)
	}
}

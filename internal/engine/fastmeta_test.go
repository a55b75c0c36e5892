package engine

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// metaOf is the _meta fastMeta sends for own over learned, as marshalMeta
// writes it (fastMeta's way without appendMeta).
func metaOf(own mcp.Meta, learned *learnedMeta) ([]byte, error) {
	out := make(map[string]any, len(own)+3)
	for k, v := range own {
		out[k] = v
	}
	if learned != nil {
		for i, k := range sdkMetaKeys() {
			if _, ok := out[k]; !ok && learned.vals[i] != nil {
				out[k] = learned.vals[i]
			}
		}
	}
	return marshalMeta(out)
}

// The _meta a gateway forwards (the client's capabilities as JSON, its log
// level, a trace context) is written by hand, byte for byte as
// encoding/json writes it.
func TestAppendMetaPlain(t *testing.T) {
	learned := &learnedMeta{vals: [3]json.RawMessage{
		json.RawMessage(`"2026-07-28"`),
		json.RawMessage(`{"name":"mcpadapter","version":"v0.1.0"}`),
		json.RawMessage(`{"roots":{}}`),
	}}
	for _, own := range []mcp.Meta{
		{mcp.MetaKeyClientCapabilities: json.RawMessage(`{"elicitation":{"form":{}},"sampling":{}}`)},
		{mcp.MetaKeyClientCapabilities: json.RawMessage(`{ "elicitation" : { } }`), "io.modelcontextprotocol/logLevel": "debug"},
		{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "x<&>": json.RawMessage(`["<&>", 1.50, null]`)},
		{mcp.MetaKeyProtocolVersion: "2026-07-28", "z": json.RawMessage(nil)},
	} {
		for _, l := range []*learnedMeta{nil, learned} {
			want, err := metaOf(own, l)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := appendMeta(nil, own, l)
			if !ok {
				t.Errorf("%v: left to marshalMeta", own)
				continue
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%v:\n got %s\nwant %s", own, got, want)
			}
		}
	}
}

// FuzzAppendMeta holds appendMeta to marshalMeta: whatever it writes is
// what marshalMeta writes, and what it leaves to marshalMeta includes
// every _meta marshalMeta refuses.
func FuzzAppendMeta(f *testing.F) {
	f.Add("io.modelcontextprotocol/logLevel", "info", "io.modelcontextprotocol/clientCapabilities", []byte(`{"roots":{"listChanged":true}}`), "", uint8(15), []byte(`{"a": 1}`))
	f.Add("k", "v\u2028", "r", []byte(`{"a":"\u003c"}`), "n", uint8(9), []byte(`"x"`))
	f.Add("é", "<&>", "r", []byte(`[1, 2]`), "", uint8(0), []byte(`{`))
	f.Add("a", "b", "r", []byte(`{"a":1`), "", uint8(0), []byte(`1`))
	f.Fuzz(func(t *testing.T, k1, v1, k2 string, raw []byte, k3 string, mask uint8, learnedRaw []byte) {
		own := mcp.Meta{}
		if k1 != "" {
			own[k1] = v1
		}
		if k2 != "" {
			own[k2] = json.RawMessage(raw)
		}
		if k3 != "" {
			own[k3] = json.RawMessage(nil)
		}
		if len(own) == 0 {
			return // fastMeta sends the learned _meta as it is
		}
		var learned *learnedMeta
		if mask&8 != 0 {
			learned = &learnedMeta{}
			for i := range learned.vals {
				if mask&(1<<i) != 0 {
					learned.vals[i] = json.RawMessage(learnedRaw)
				}
			}
		}
		want, err := metaOf(own, learned)
		got, ok := appendMeta(nil, own, learned)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("appendMeta wrote %s; marshalMeta refuses it: %v", got, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("got %s\nwant %s", got, want)
		}
	})
}

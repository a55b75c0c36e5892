package mcpadapter_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// longText calls the long_text tool for n bytes of unit.
func longText(t *testing.T, tool *mcpadapter.Tool, n int, unit string) *mcpadapter.Result {
	t.Helper()
	args, _ := json.Marshal(testserver.LongTextIn{Bytes: n, Unit: unit})
	res, err := tool.Call(testCtx(t), args)
	if err != nil || res.IsError {
		t.Fatalf("long_text: %v, %v", res, err)
	}
	return res
}

// TestResultLimit checks what reaches a model of a big result: the
// default limit, Options.MaxResultBytes, a config file's per-tool
// "maxResultBytes", and no limit; the whole result stays on the Result.
func TestResultLimit(t *testing.T) {
	url := testserver.ServeStreamable(t, testserver.New(testserver.Options{}))
	tools := func(opts *mcpadapter.Options, toolConfig string) *mcpadapter.Tool {
		cfg, err := mcpadapter.ParseConfig([]byte(fmt.Sprintf(`{"mcpServers":{"s":{"url":%q,"tools":{"long_text":%s}}}}`, url, toolConfig)))
		if err != nil {
			t.Fatal(err)
		}
		a, err := mcpadapter.New(cfg, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Close() })
		ts, err := a.Tools(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		return toolByName(t, ts, "long_text")
	}
	check := func(name string, res *mcpadapter.Result, limit, total int) {
		t.Helper()
		text := res.Text()
		shown, all, cut := res.Truncated()
		// A multi-byte unit cut at the end loses its last partial rune.
		if all != len(res.FullText()) || res.FullText() != strings.Join(textsOf(res), "") || total-all >= utf8.UTFMax {
			t.Errorf("%s: FullText is not the whole result (%d bytes of %d)", name, len(res.FullText()), total)
		}
		if limit == 0 {
			if cut || text != res.FullText() {
				t.Errorf("%s: cut without a limit", name)
			}
			return
		}
		note := fmt.Sprintf("… truncated: %d of %d bytes shown", shown, all)
		if !cut || len(text) > limit || !strings.Contains(text, note) || !utf8.ValidString(text) {
			t.Errorf("%s: %d bytes (limit %d), cut %v, note %q wanted", name, len(text), limit, cut, note)
		}
		if got := len((&mcpadapter.Result{Content: res.ModelContent()}).Text()); got > limit {
			t.Errorf("%s: ModelContent has %d bytes of text; limit %d", name, got, limit)
		}
	}
	check("default", longText(t, tools(nil, `{}`), 300_000, "é€😀"), mcpadapter.DefaultMaxResultBytes, 300_000)
	check("small result", longText(t, tools(nil, `{}`), 5_000, ""), 0, 5_000)
	check("Options.MaxResultBytes", longText(t, tools(&mcpadapter.Options{MaxResultBytes: mcpadapter.TokenBudget(500)}, `{}`), 5_000, "日本語"), 2_000, 5_000)
	check("per tool", longText(t, tools(&mcpadapter.Options{MaxResultBytes: 2_000}, `{"maxResultBytes": 1000}`), 5_000, ""), 1_000, 5_000)
	check("no limit", longText(t, tools(nil, `{"maxResultBytes": -1}`), 300_000, ""), 0, 300_000)

	if _, err := mcpadapter.New(url, &mcpadapter.Options{MaxResultBytes: 10}); err == nil || !strings.Contains(err.Error(), "Options.MaxResultBytes") {
		t.Errorf("MaxResultBytes 10: got %v", err)
	}
	cfg, err := mcpadapter.ParseConfig([]byte(fmt.Sprintf(`{"mcpServers":{"s":{"url":%q,"tools":{"long_text":{"maxResultBytes":10}}}}}`, url)))
	if err == nil {
		_, err = mcpadapter.New(cfg, nil)
	}
	if err == nil || !strings.Contains(err.Error(), "mcpServers.s.tools.long_text.maxResultBytes") {
		t.Errorf("maxResultBytes 10 in a config: got %v", err)
	}
}

// textsOf returns the text of each text block of res.
func textsOf(res *mcpadapter.Result) []string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcpadapter.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return out
}

package schemaprofile_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/schemacheck"
	"github.com/mcpadapter/mcpadapter/schemaprofile"
)

// catalogSchemas returns the distinct input schemas of the real servers
// captured in toolsearch/testdata/catalog (no network, no npm).
func catalogSchemas(t testing.TB) []corpusSchema {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "toolsearch", "testdata", "catalog", "*.json"))
	if err != nil || len(files) < 25 {
		t.Fatalf("captured catalog: %d files, %v", len(files), err)
	}
	sort.Strings(files)
	seen := map[string]bool{}
	var out []corpusSchema
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Package string `json:"package"`
			Tools   []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tl := range c.Tools {
			if len(tl.InputSchema) == 0 {
				continue
			}
			key := canonical(t, tl.InputSchema)
			if !seen[key] {
				seen[key] = true
				out = append(out, corpusSchema{source: c.Package + "/" + tl.Name, schema: tl.InputSchema})
			}
		}
	}
	return out
}

// TestCatalogProfiles runs every profile over the captured real schemas:
// each output passes its provider's published rules, and OpenAIStrict and
// AnthropicStrict send at least 95% of them strict.
func TestCatalogProfiles(t *testing.T) {
	corpus := catalogSchemas(t)
	var report strings.Builder
	fmt.Fprintf(&report, "captured corpus: %d distinct schemas\n", len(corpus))
	asSent := 0
	for _, s := range corpus {
		if len(schemacheck.AnthropicStrict(s.schema)) > 0 {
			asSent++
		}
	}
	fmt.Fprintf(&report, "as the servers send them, %d of %d (%.1f%%) break Anthropic's strict tool use rules\n", asSent, len(corpus), 100*float64(asSent)/float64(len(corpus)))
	for _, p := range schemaprofile.Profiles() {
		strict := 0
		why := map[string]int{}
		for _, s := range corpus {
			r, err := schemaprofile.Apply(p, s.schema)
			if err != nil {
				t.Errorf("%s: %s: %v", p, s.source, err)
				continue
			}
			for _, prob := range validate(r) {
				t.Errorf("%s: %s: output refused: %s", p, s.source, prob)
			}
			if r.Strict {
				strict++
			}
			for _, c := range r.Changes {
				if c.Rule == schemaprofile.RuleNotStrict {
					d := c.Detail
					if i := strings.IndexAny(d, " :"); i > 0 {
						d = d[:i]
					}
					why[d]++
				}
			}
		}
		fmt.Fprintf(&report, "%-16s strict %d of %d (%.1f%%) not-strict reasons %v\n", p, strict, len(corpus), 100*float64(strict)/float64(len(corpus)), why)
		if (p == schemaprofile.OpenAIStrict || p == schemaprofile.AnthropicStrict) && float64(strict) < 0.95*float64(len(corpus)) {
			t.Errorf("%s: %d of %d schemas strict, want at least 95%%", p, strict, len(corpus))
		}
	}
	t.Log("\n" + report.String())
}

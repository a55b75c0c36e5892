package toolsearch

import (
	"fmt"
	"os"
	"testing"
)

// TestEvalMisses lists the tune half's misses (TOOLSEARCH_MISSES=1).
func TestEvalMisses(t *testing.T) {
	if os.Getenv("TOOLSEARCH_MISSES") == "" {
		t.Skip("set TOOLSEARCH_MISSES=1")
	}
	tools, _ := loadCatalog(t)
	docs := make([]Doc, len(tools))
	for i, tl := range tools {
		docs[i] = tl.doc
	}
	ix := New(docs)
	for _, q := range loadQueries(t) {
		if q.Half != "tune" {
			continue
		}
		hits := ix.Search(q.Query, 5)
		ok1, ok5 := false, false
		for i, h := range hits {
			for _, w := range q.Want {
				if h.ID == w {
					ok5 = true
					ok1 = ok1 || i == 0
				}
			}
		}
		if os.Getenv("TOOLSEARCH_MISSES") == "cov" {
			c, m := 0.0, 0.0
			if len(hits) > 0 {
				c, m = hits[0].Coverage, hits[0].Fit
			}
			t.Logf("COV %s %.2f %.2f %v %q", q.Kind, c, m, ok1, q.Query)
			continue
		}
		if q.Kind == "none" || !ok1 {
			var got []string
			for _, h := range hits {
				got = append(got, fmt.Sprintf("%s(%.2f)", h.ID, h.Coverage))
			}
			t.Logf("%s top1=%v top5=%v %q\n   want %v\n   got %v", q.Kind, ok1, ok5, q.Query, q.Want, got)
		}
	}
}

package toolsearch

import (
	"fmt"
	"os"
	"sort"
	"testing"
)

// TestSweep tries weights on the tune half only (TOOLSEARCH_SWEEP=1); it
// is how defaults were chosen.
func TestSweep(t *testing.T) {
	if os.Getenv("TOOLSEARCH_SWEEP") == "" {
		t.Skip("set TOOLSEARCH_SWEEP=1")
	}
	tools, _ := loadCatalog(t)
	qs := loadQueries(t)
	docs := make([]Doc, len(tools))
	for i, tl := range tools {
		docs[i] = tl.doc
	}
	type res struct {
		desc       string
		top1, top5 int
		fh, cut    int
	}
	var out []res
	for _, desc := range []float64{0.4, 0.7, 1} {
		for _, b := range []float64{0.75, 0.9} {
			for _, ce := range []float64{1, 1.5, 2.5} {
				for _, nb := range []float64{0.5, 1, 2} {
					for _, co := range []float64{0.3, 0.6} {
						for _, rel := range []float64{0.3, 0.5, 0.7} {
							p := defaults
							p.desc, p.b, p.coverageExp, p.nameBoost, p.credit[inOther], p.related = desc, b, ce, nb, co, rel
							ix := newIndex(docs, p)
							s := score(qs, "tune", func(q string) ([]string, bool) {
								hits := ix.Search(q, 5)
								ids := make([]string, len(hits))
								for i, h := range hits {
									ids[i] = h.ID
								}
								return ids, len(hits) > 0 && hits[0].Fits
							})
							out = append(out, res{fmt.Sprintf("desc=%v b=%v cov=%v name=%v other=%v rel=%v", desc, b, ce, nb, co, rel), s.top1, s.top5, s.noneFalseHit, s.cutMissed})
						}
					}
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].top1+2*out[i].top5 > out[j].top1+2*out[j].top5
	})
	for _, r := range out[:15] {
		t.Logf("%s top1=%d top5=%d falsehit=%d cut=%d", r.desc, r.top1, r.top5, r.fh, r.cut)
	}
}

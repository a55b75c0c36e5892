package toolsearch

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The evaluation: the tools of real MCP servers (testdata/catalog, their
// tools/list captured once) and labelled queries (testdata/queries.json,
// written before the ranking was tuned), in two halves: the ranking was
// tuned on "tune"; "heldout" is the figure that counts.

type evalTool struct {
	id   string // package:tool
	name string // as a group names it: prefix_tool
	doc  Doc
}

type evalQuery struct {
	Kind  string   `json:"kind"`
	Half  string   `json:"half"`
	Query string   `json:"query"`
	Want  []string `json:"want"`
}

// loadCatalog reads every captured listing; each server's tools are named
// as in a group of all of them (prefix_tool), the prefix being the name
// a config would give the server.
func loadCatalog(t testing.TB) ([]evalTool, int) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "catalog", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no catalog: %v", err)
	}
	sort.Strings(files)
	var tools []evalTool
	used := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Package string `json:"package"`
			Tools   []struct {
				Name        string          `json:"name"`
				Title       string          `json:"title"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
				Annotations struct {
					Title string `json:"title"`
				} `json:"annotations"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		prefix := serverPrefix(c.Package, used)
		for _, tl := range c.Tools {
			title := tl.Title
			if title == "" {
				title = tl.Annotations.Title
			}
			name := prefix + "_" + tl.Name
			id := c.Package + ":" + tl.Name
			tools = append(tools, evalTool{id: id, name: name,
				doc: Doc{ID: id, Name: name, Title: title, Description: tl.Description, Args: SchemaArgs(tl.InputSchema)}})
		}
	}
	return tools, len(files)
}

// serverPrefix is the name a user would give a server in a config: the
// package's last part without "mcp"/"server" affixes (its scope when
// nothing else is left, or when the name is taken).
func serverPrefix(pkg string, used map[string]bool) string {
	scope, name := "", pkg
	if i := strings.LastIndex(pkg, "/"); i >= 0 {
		scope, name = strings.TrimPrefix(pkg[:i], "@"), pkg[i+1:]
	}
	for _, affix := range []string{"mcp-server-", "server-", "mcp-"} {
		name = strings.TrimPrefix(name, affix)
	}
	for _, affix := range []string{"-mcp-server", "-mcp", "-server"} {
		name = strings.TrimSuffix(name, affix)
	}
	if name == "mcp" || name == "server" || name == "" {
		name = scope
	}
	if used[name] && scope != "" {
		name = scope + "-" + name
	}
	used[name] = true
	return name
}

func loadQueries(t testing.TB) []evalQuery {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "queries.json"))
	if err != nil {
		t.Fatal(err)
	}
	var qs []evalQuery
	if err := json.Unmarshal(b, &qs); err != nil {
		t.Fatal(err)
	}
	return qs
}

// A ranker answers a query with tool IDs, best first, and whether the
// best is good enough to show (the "nothing fits" cut-off).
type ranker func(query string) (ids []string, fits bool)

// evalScores are one ranker's figures on one half.
type evalScores struct {
	answerable, top1, top5 int
	goal, goalTop5         int
	none, noneFalseHit     int
	cutMissed              int // answerable queries the cut-off said nothing fits
	byKind                 map[string][2]int
}

func (s evalScores) pct(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(d))
}

func score(qs []evalQuery, half string, rank ranker) evalScores {
	s := evalScores{byKind: map[string][2]int{}}
	for _, q := range qs {
		if half != "" && q.Half != half {
			continue
		}
		ids, fits := rank(q.Query)
		if q.Kind == "none" {
			s.none++
			if fits {
				s.noneFalseHit++
			}
			continue
		}
		s.answerable++
		if !fits {
			s.cutMissed++
		}
		in := func(n int) bool {
			for i := 0; i < n && i < len(ids); i++ {
				for _, w := range q.Want {
					if ids[i] == w {
						return true
					}
				}
			}
			return false
		}
		k := s.byKind[q.Kind]
		k[1]++
		if in(1) {
			s.top1++
		}
		if in(5) {
			s.top5++
			k[0]++
		}
		s.byKind[q.Kind] = k
		if q.Kind == "goal" {
			s.goal++
			if in(5) {
				s.goalTop5++
			}
		}
	}
	return s
}

// indexRanker ranks with this package.
func indexRanker(tools []evalTool) ranker {
	docs := make([]Doc, len(tools))
	for i, t := range tools {
		docs[i] = t.doc
	}
	ix := New(docs)
	return func(q string) ([]string, bool) {
		hits := ix.Search(q, 5)
		ids := make([]string, len(hits))
		for i, h := range hits {
			ids[i] = h.ID
		}
		return ids, len(hits) > 0 && fitsOf(hits)
	}
}

// bm25Ranker is the baseline: plain BM25 (k1 1.2, b 0.75) over the name,
// description and argument names and descriptions as one text, split on
// non-letters, lower-cased, no stemming, stop words or synonyms.
func bm25Ranker(tools []evalTool) ranker {
	split := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
		})
	}
	type doc struct {
		tf  map[string]float64
		len float64
	}
	docs := make([]doc, len(tools))
	df := map[string]int{}
	var total float64
	for i, t := range tools {
		text := t.doc.Name + " " + t.doc.Title + " " + t.doc.Description
		for _, a := range t.doc.Args {
			text += " " + a.Name + " " + a.Description
		}
		d := doc{tf: map[string]float64{}}
		for _, w := range split(text) {
			d.tf[w]++
			d.len++
		}
		for w := range d.tf {
			df[w]++
		}
		total += d.len
		docs[i] = d
	}
	avg := total / float64(len(docs))
	n := float64(len(docs))
	return func(q string) ([]string, bool) {
		scores := make([]float64, len(docs))
		for _, w := range split(q) {
			if df[w] == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[w])+0.5)/(float64(df[w])+0.5))
			for i, d := range docs {
				if tf := d.tf[w]; tf > 0 {
					scores[i] += idf * tf * 2.2 / (tf + 1.2*(0.25+0.75*d.len/avg))
				}
			}
		}
		order := make([]int, len(docs))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
		var ids []string
		for _, i := range order[:5] {
			if scores[i] > 0 {
				ids = append(ids, tools[i].id)
			}
		}
		return ids, len(ids) > 0
	}
}

// TestEvaluation measures the ranking on the real catalog and holds it
// to its goals on the held-out half: at least 90% of answerable queries
// with a right tool in the top 5, 70% first, 80% of inferred goals in the
// top 5, and at most 20% of nothing-fits queries answered with a tool
// that fits.
// The table it logs (go test -run TestEvaluation -v ./toolsearch) is the
// one in docs/tool-search.md.
func TestEvaluation(t *testing.T) {
	tools, servers := loadCatalog(t)
	qs := loadQueries(t)
	known := map[string]bool{}
	for _, tl := range tools {
		known[tl.id] = true
	}
	for _, q := range qs {
		for _, w := range q.Want {
			if !known[w] {
				t.Errorf("query %q wants %s, which the catalog does not have", q.Query, w)
			}
		}
	}
	if len(tools) < 300 || servers < 25 || len(qs) < 120 {
		t.Fatalf("catalog of %d tools from %d servers and %d queries: want at least 300, 25 and 120", len(tools), servers, len(qs))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "catalog: %d tools from %d servers; %d queries\n", len(tools), servers, len(qs))
	fmt.Fprintf(&b, "| ranker | half | top-1 | top-5 | paraphrase top-5 | goal top-5 | several top-5 | nothing fits: false hits | answerable cut off |\n|---|---|---|---|---|---|---|---|---|\n")
	rankers := []struct {
		name string
		r    ranker
	}{{"BM25 baseline", bm25Ranker(tools)}, {"toolsearch", indexRanker(tools)}}
	results := map[string]evalScores{}
	for _, rk := range rankers {
		for _, half := range []string{"tune", "heldout"} {
			s := score(qs, half, rk.r)
			results[rk.name+"/"+half] = s
			kind := func(k string) string { return s.pct(s.byKind[k][0], s.byKind[k][1]) }
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s (%d of %d) | %s |\n", rk.name, half,
				s.pct(s.top1, s.answerable), s.pct(s.top5, s.answerable), kind("paraphrase"), kind("goal"), kind("several"),
				s.pct(s.noneFalseHit, s.none), s.noneFalseHit, s.none, s.pct(s.cutMissed, s.answerable))
		}
	}
	t.Log("\n" + b.String())
	h := results["toolsearch/heldout"]
	check := func(what string, n, d int, want float64) {
		if got := float64(n) / float64(d); got < want {
			t.Errorf("held-out %s: %.1f%%, want at least %.0f%%", what, 100*got, 100*want)
		}
	}
	check("top-5", h.top5, h.answerable, 0.90)
	check("top-1", h.top1, h.answerable, 0.70)
	check("goal top-5", h.goalTop5, h.goal, 0.80)
	if float64(h.noneFalseHit)/float64(h.none) > 0.20 {
		t.Errorf("held-out nothing-fits false hits: %d of %d, want at most 20%%", h.noneFalseHit, h.none)
	}
}

// fitsOf is the cut-off: whether the best hit fits the query.
func fitsOf(hits []Hit) bool { return len(hits) > 0 && hits[0].Fits }

// benchDocs is the catalog repeated to n tools (names made distinct).
func benchDocs(b *testing.B, n int) ([]evalTool, []evalQuery) {
	tools, _ := loadCatalog(b)
	out := make([]evalTool, 0, n)
	for i := 0; len(out) < n; i++ {
		t := tools[i%len(tools)]
		if i >= len(tools) {
			t.id = fmt.Sprintf("%s#%d", t.id, i/len(tools))
			t.doc.ID, t.doc.Name = t.id, fmt.Sprintf("%s%d", t.doc.Name, i/len(tools))
		}
		out = append(out, t)
	}
	return out, loadQueries(b)
}

// BenchmarkSearch1000 answers the evaluation's queries, one per
// iteration, over 1,000 tools; BenchmarkBM25Baseline1000 is the plain
// BM25 peer on the same tools and queries.
func BenchmarkSearch1000(b *testing.B) {
	tools, qs := benchDocs(b, 1000)
	r := indexRanker(tools)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r(qs[i%len(qs)].Query)
		i++
	}
}

func BenchmarkBM25Baseline1000(b *testing.B) {
	tools, qs := benchDocs(b, 1000)
	r := bm25Ranker(tools)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r(qs[i%len(qs)].Query)
		i++
	}
}

// Package toolsearch ranks tools against a free-text query: an in-memory
// index over tool names (split into words whether snake_case, camelCase or
// kebab-case), titles, descriptions and argument names and descriptions,
// scored with BM25F (per-field weights) over lightly stemmed words with a
// few synonyms. It has no dependencies beyond the standard library and no
// state beyond an Index, which is immutable once built and safe for
// concurrent use.
package toolsearch

import (
	"math"
	"sort"
)

// A Doc is one tool to index.
type Doc struct {
	// ID identifies the tool in Hits (the name shown to the model).
	ID string
	// Name is the tool's name; its words weigh the most.
	Name string
	// Title and Description are the tool's display name and description.
	Title, Description string
	// Args are the tool's arguments.
	Args []Arg
}

// An Arg is one argument of a tool: its name and description.
type Arg struct {
	Name, Description string
}

// A Hit is one tool matching a query.
type Hit struct {
	// ID is the Doc's ID.
	ID string
	// Score is the tool's BM25F score: higher matches better. Scores
	// compare within one query only.
	Score float64
}

// Field weights: a word in a tool's name says more about it than one in
// its description.
const (
	weightName    = 3.0
	weightTitle   = 2.0
	weightDesc    = 1.0
	weightArgName = 1.0
	weightArgDesc = 0.5

	bm25K1 = 1.2
	bm25B  = 0.75
	// weightSynonym scales a query word's synonyms.
	weightSynonym = 0.4
)

// An Index is a built search index. Build one with New.
type Index struct {
	ids      []string
	postings map[string][]posting // by term
	docLen   []float64            // weighted length of each doc
	avgLen   float64
}

type posting struct {
	doc int
	tf  float64 // weighted term frequency
}

// New indexes docs. Docs with the same ID are indexed separately.
func New(docs []Doc) *Index {
	ix := &Index{
		ids:      make([]string, len(docs)),
		postings: make(map[string][]posting),
		docLen:   make([]float64, len(docs)),
	}
	var total float64
	for i, d := range docs {
		ix.ids[i] = d.ID
		tf := make(map[string]float64)
		add := func(text string, w float64) {
			for _, t := range Tokenize(text) {
				tf[t] += w
				ix.docLen[i] += w
			}
		}
		add(d.Name, weightName)
		add(d.Title, weightTitle)
		add(d.Description, weightDesc)
		for _, a := range d.Args {
			add(a.Name, weightArgName)
			add(a.Description, weightArgDesc)
		}
		total += ix.docLen[i]
		for t, f := range tf {
			ix.postings[t] = append(ix.postings[t], posting{doc: i, tf: f})
		}
	}
	if len(docs) > 0 {
		ix.avgLen = total / float64(len(docs))
	}
	return ix
}

// Len returns the number of docs indexed.
func (ix *Index) Len() int { return len(ix.ids) }

// Search returns the k best-scoring docs for query, best first (ties in
// index order); docs sharing no word with the query are left out. k <= 0
// means all matches.
func (ix *Index) Search(query string, k int) []Hit {
	if ix == nil || len(ix.ids) == 0 {
		return nil
	}
	weights := queryTerms(query)
	scores := make(map[int]float64)
	n := float64(len(ix.ids))
	for term, qw := range weights {
		ps := ix.postings[term]
		if len(ps) == 0 {
			continue
		}
		idf := math.Log(1 + (n-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
		for _, p := range ps {
			norm := bm25K1 * (1 - bm25B + bm25B*ix.docLen[p.doc]/ix.avgLen)
			scores[p.doc] += qw * idf * p.tf * (bm25K1 + 1) / (p.tf + norm)
		}
	}
	hits := make([]Hit, 0, len(scores))
	order := make([]int, 0, len(scores))
	for d := range scores {
		order = append(order, d)
	}
	sort.Slice(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if scores[a] != scores[b] {
			return scores[a] > scores[b]
		}
		return a < b
	})
	for _, d := range order {
		if k > 0 && len(hits) == k {
			break
		}
		hits = append(hits, Hit{ID: ix.ids[d], Score: scores[d]})
	}
	return hits
}

// queryTerms returns the query's terms with their weights: 1 for its own
// words (more if repeated), weightSynonym for their synonyms.
func queryTerms(query string) map[string]float64 {
	w := make(map[string]float64)
	for _, t := range Tokenize(query) {
		w[t]++
	}
	syn := make(map[string]float64)
	for t := range w {
		for _, s := range synonyms[t] {
			if _, own := w[s]; !own {
				syn[s] = weightSynonym
			}
		}
	}
	for s, v := range syn {
		w[s] = v
	}
	return w
}

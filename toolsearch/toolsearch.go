// Package toolsearch ranks tools against a free-text query: an in-memory
// index over tool names (split into words whether snake_case, camelCase or
// kebab-case), titles, the first sentence of descriptions, the rest of
// descriptions and argument names and descriptions, scored with BM25F
// (per-field weights) over lightly stemmed words and a table of related
// words, each document's score scaled by how much of the query it covers.
// Coverage also decides whether the best tool fits the query at all
// (Hit.Fits, MinCoverage). It has no dependencies beyond the standard
// library and no state beyond an Index, which is immutable once built and
// safe for concurrent use.
package toolsearch

import (
	"math"
	"sort"
	"strings"
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
	// Score is the tool's score: higher matches better. Scores compare
	// within one query only.
	Score float64
	// Coverage is the share of the query the tool matches, each query
	// word weighted by how rare it is among the tools (0 to 1); a word
	// matched only through a related word counts half.
	Coverage float64
	// Fit is how much of the query the tool matches, each word weighted
	// by its rarity, in units of the rarest word (one no other tool has):
	// Coverage times the query's weight.
	Fit float64
	// Fits is Fit >= MinFit: the tool plausibly does what the query
	// asks.
	Fits bool
}

// MinFit is the cut-off under which a hit does not fit the query: the
// tool matches less of it than one word only that tool has would. The
// best tool of a query no tool answers ("book a flight" in a catalog of
// developer tools) matches a few common words ("book", "from"); one that
// answers it matches what the query is about. Measured on the evaluation
// in the repository (docs/tool-search.md) as the false hits on queries
// nothing fits and the answerable queries it marks as not fitting.
const MinFit = 1.0

// params are the ranking's weights.
type params struct {
	// Field weights: a word in a tool's name says more about it than
	// one in its description; the description's first sentence says
	// what the tool does, the rest often how to call it.
	name, title, lead, desc, argName, argDesc float64
	// BM25 saturation and length normalisation.
	k1, b float64
	// related scales a query word's related words, in score and
	// coverage.
	related float64
	// coverageExp is how strongly a document's coverage of the query
	// scales its score; nameBoost scales it up by the share of the
	// query its name holds.
	coverageExp, nameBoost float64
	// credit toward coverage for a query word found in a tool's name,
	// its title or first sentence, or elsewhere.
	credit [3]float64
}

// defaults are the weights tuned on half of the evaluation's queries
// (docs/tool-search.md).
var defaults = params{
	name: 3, title: 2, lead: 1.5, desc: 0.4, argName: 0.6, argDesc: 0.3,
	k1: 1.2, b: 0.9,
	related:     0.7,
	coverageExp: 2.5, nameBoost: 1,
	credit: [3]float64{inOther: 0.3, inLead: 0.9, inName: 1},
}

// An Index is a built search index. Build one with New.
type Index struct {
	p        params
	ids      []string
	postings map[string][]posting // by term
	docLen   []float64            // weighted length of each doc
	avgLen   float64
}

type posting struct {
	doc int32
	// where says where the term is: inName, inLead (title or first
	// sentence) or elsewhere.
	where uint8
	// bm is the term's BM25 weight in the doc: its weighted frequency,
	// saturated and normalised by the doc's length.
	bm float64
}

const (
	inOther uint8 = iota
	inLead
	inName
)

// New indexes docs. Docs with the same ID are indexed separately.
func New(docs []Doc) *Index { return newIndex(docs, defaults) }

func newIndex(docs []Doc, p params) *Index {
	ix := &Index{
		p:        p,
		ids:      make([]string, len(docs)),
		postings: make(map[string][]posting),
		docLen:   make([]float64, len(docs)),
	}
	var total float64
	for i, d := range docs {
		ix.ids[i] = d.ID
		tf := make(map[string]float64)
		where := make(map[string]uint8)
		add := func(text string, w float64) {
			for _, t := range Tokenize(text) {
				tf[t] += w
				ix.docLen[i] += w
			}
		}
		lead, rest := leadSentence(d.Description)
		for _, t := range Tokenize(d.Title + " " + lead) {
			where[t] = inLead
		}
		for _, t := range Tokenize(d.Name) {
			where[t] = inName
		}
		add(d.Name, p.name)
		add(d.Title, p.title)
		add(lead, p.lead)
		add(rest, p.desc)
		for _, a := range d.Args {
			add(a.Name, p.argName)
			add(a.Description, p.argDesc)
		}
		total += ix.docLen[i]
		for t, f := range tf {
			ix.postings[t] = append(ix.postings[t], posting{doc: int32(i), bm: f, where: where[t]})
		}
	}
	if len(docs) > 0 {
		ix.avgLen = total / float64(len(docs))
	}
	for _, ps := range ix.postings {
		for i := range ps {
			tf := ps[i].bm
			norm := p.k1 * (1 - p.b + p.b*ix.docLen[ps[i].doc]/ix.avgLen)
			ps[i].bm = tf * (p.k1 + 1) / (tf + norm)
		}
	}
	return ix
}

// leadSentence splits a description after its first sentence (at most
// 300 bytes of it).
func leadSentence(s string) (lead, rest string) {
	s = strings.TrimSpace(s)
	end := len(s)
	for i := 0; i < len(s) && i < 300; i++ {
		if (s[i] == '.' || s[i] == '\n') && (i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\n') {
			end = i + 1
			break
		}
	}
	if end > 300 {
		end = 300
		for end > 0 && s[end-1]&0xC0 == 0x80 {
			end--
		}
	}
	return s[:end], s[end:]
}

// Len returns the number of docs indexed.
func (ix *Index) Len() int { return len(ix.ids) }

// A concept is one word of the query with its related words.
type concept struct {
	terms []string  // the word first, then its related words
	w     []float64 // each term's weight
	idf   float64   // the word's rarity: its weight in coverage
}

// Search returns the k best-scoring docs for query, best first (ties in
// index order); docs sharing no word with the query are left out. k <= 0
// means all matches.
func (ix *Index) Search(query string, k int) []Hit {
	if ix == nil || len(ix.ids) == 0 {
		return nil
	}
	concepts := ix.concepts(query)
	if len(concepts) == 0 {
		return nil
	}
	n := float64(len(ix.ids))
	maxIDF := math.Log(1 + (n+0.5)/0.5)
	p := ix.p
	// Each doc that shares a word with the query gets a slot: its
	// score and, per concept c, its credit (matched[2c]) and its credit
	// from its name alone (matched[2c+1]).
	slot := make([]int32, len(ix.ids))
	stride := 2 * len(concepts)
	guess := min(len(ix.ids), 512)
	docs := make([]int32, 0, guess)
	scores := make([]float64, 0, guess)
	matched := make([]float64, 0, guess*stride)
	totalIDF := 1e-9
	for ci, c := range concepts {
		totalIDF += c.idf
		for ti, term := range c.terms {
			ps := ix.postings[term]
			if len(ps) == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
			credit := p.credit
			if ti > 0 {
				for i := range credit {
					credit[i] *= p.related
				}
			}
			for _, ps := range ps {
				sl := slot[ps.doc] - 1
				if sl < 0 {
					sl = int32(len(docs))
					slot[ps.doc] = sl + 1
					docs = append(docs, ps.doc)
					scores = append(scores, 0)
					for range stride {
						matched = append(matched, 0)
					}
				}
				scores[sl] += c.w[ti] * idf * ps.bm
				m := matched[int(sl)*stride : int(sl+1)*stride]
				m[2*ci] = max(m[2*ci], credit[ps.where])
				if ps.where == inName {
					m[2*ci+1] = max(m[2*ci+1], credit[ps.where])
				}
			}
		}
	}
	type scored struct {
		d   int32
		hit Hit
	}
	better := func(a, b *scored) bool {
		if a.hit.Score != b.hit.Score {
			return a.hit.Score > b.hit.Score
		}
		return a.d < b.d
	}
	var all []scored
	for sl, d := range docs {
		var cov, named float64
		m := matched[sl*stride : (sl+1)*stride]
		for ci, c := range concepts {
			cov += m[2*ci] * c.idf
			named += m[2*ci+1] * c.idf
		}
		cov /= totalIDF
		sc := scores[sl] * math.Pow(cov, p.coverageExp) * (1 + p.nameBoost*named/totalIDF)
		x := scored{d, Hit{Score: sc}}
		if k > 0 && len(all) == k && !better(&x, &all[k-1]) {
			continue // not among the k best: no need to finish it
		}
		fit := cov * totalIDF / maxIDF
		x.hit = Hit{ID: ix.ids[d], Score: sc, Coverage: cov, Fit: fit, Fits: fit >= MinFit}
		// Insert in order, keeping at most k.
		i := sort.Search(len(all), func(i int) bool { return better(&x, &all[i]) })
		if k <= 0 || len(all) < k {
			all = append(all, scored{})
		}
		copy(all[i+1:], all[i:])
		all[i] = x
	}
	hits := make([]Hit, len(all))
	for i, a := range all {
		hits[i] = a.hit
	}
	return hits
}

// concepts returns the query's distinct words with their related words
// and rarity. A word no tool has is as rare as can be.
func (ix *Index) concepts(query string) []concept {
	n := float64(len(ix.ids))
	maxIDF := math.Log(1 + (n+0.5)/0.5)
	seen := map[string]bool{}
	var out []concept
	for _, qt := range queryTokens(query) {
		t := qt.term
		if seen[t] {
			continue
		}
		seen[t] = true
		c := concept{terms: []string{t}, w: []float64{1}, idf: maxIDF}
		if df := len(ix.postings[t]); df > 0 {
			c.idf = math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
		} else if qt.value {
			// A name or number no tool knows (Kyoto, 42,
			// report.txt) is what to act on, not what to do.
			c.idf = 0
		}
		for _, r := range related(t) {
			if r != t {
				c.terms = append(c.terms, r)
				c.w = append(c.w, ix.p.related)
			}
		}
		out = append(out, c)
	}
	return out
}

package toolsearch

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxTokenBytes bounds one token: longer runs of letters (hashes, base64)
// are cut, so a hostile description cannot make one huge term.
const maxTokenBytes = 64

// Tokenize splits text into lower-case, lightly stemmed words: at any
// character that is not a letter or digit (so snake_case, kebab-case,
// dotted.names and prose all split), at lower-to-upper case changes and
// acronym ends (camelCase, HTTPServer), and between letters and digits.
// Stop words ("the", "a", "to", ...) are dropped and plural and verb
// endings stripped ("issues" → "issue", "listing" → "list"). Invalid
// UTF-8 is treated as separators.
func Tokenize(text string) []string {
	var out []string
	var word []rune
	flush := func() {
		if len(word) == 0 {
			return
		}
		w := string(word)
		word = word[:0]
		if len(w) > maxTokenBytes {
			w = strings.ToValidUTF8(w[:maxTokenBytes], "")
		}
		if stopWords[w] {
			return
		}
		out = append(out, stem(w))
	}
	var prev rune
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if r == utf8.RuneError && size <= 1 || !(unicode.IsLetter(r) || unicode.IsDigit(r)) {
			flush()
			prev = 0
			continue
		}
		if len(word) > 0 && boundary(prev, r, text[i:]) {
			flush()
		}
		word = append(word, unicode.ToLower(r))
		prev = r
	}
	flush()
	return out
}

// A qtoken is one word of a query: its term and whether it looks like a
// value (a name or a number) rather than a word for what to do.
type qtoken struct {
	term  string
	value bool
}

// queryTokens tokenizes a query, marking the terms of words that hold a
// digit, a dot, slash, @ or underscore inside (42, report.txt, fix_login)
// or that start with a capital letter after the first word (Kyoto, Ana).
func queryTokens(query string) []qtoken {
	var out []qtoken
	first := true
	for _, f := range strings.Fields(query) {
		w := strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if w == "" {
			continue
		}
		r, _ := utf8.DecodeRuneInString(w)
		value := strings.ContainsFunc(w, unicode.IsDigit) || strings.ContainsAny(w, "./@_") ||
			!first && unicode.IsUpper(r)
		first = false
		for _, t := range Tokenize(w) {
			out = append(out, qtoken{term: t, value: value})
		}
	}
	return out
}

// boundary reports whether a word ends between prev and r, rest being the
// text after r: camelCase, the end of an acronym (the "S" of "HTTPServer"
// starts "Server"), and letters next to digits.
func boundary(prev, r rune, rest string) bool {
	switch {
	case unicode.IsDigit(prev) != unicode.IsDigit(r):
		return true
	case unicode.IsLower(prev) && unicode.IsUpper(r):
		return true
	case unicode.IsUpper(prev) && unicode.IsUpper(r):
		next, _ := utf8.DecodeRuneInString(rest)
		return unicode.IsLower(next)
	}
	return false
}

// stem strips common English endings, the same way for documents and
// queries; it is deliberately light (no dictionary), so related forms
// meet: "issues", "issue"; "listing", "listed", "list"; "queries",
// "query"; "created", "creating", "create" (a final e goes too).
func stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 4 && strings.HasSuffix(w, "ied"):
		return w[:n-3] + "y"
	case n > 5 && strings.HasSuffix(w, "ing"):
		w = undouble(w[:n-3])
	case n > 4 && strings.HasSuffix(w, "ed"):
		w = undouble(w[:n-2])
	case n > 4 && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes")):
		return w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:n-1]
	}
	return dropE(w)
}

// dropE removes a final e, so that "create" meets "created" (creat).
func dropE(w string) string {
	n := len(w)
	if n > 3 && w[n-1] == 'e' && !strings.ContainsRune("eoy", rune(w[n-2])) {
		return w[:n-1]
	}
	return w
}

// undouble turns "stopp" (from "stopped") into "stop".
func undouble(w string) string {
	n := len(w)
	if n > 2 && w[n-1] == w[n-2] && w[n-1] != 's' && w[n-1] != 'l' && !strings.ContainsRune("aeiou", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

// related returns the words related to a stemmed query word.
func related(t string) []string { return relatedWords[t] }

// relatedWords maps a stemmed query word to stemmed words that often name
// the same action or thing in tool names and descriptions (built once
// from relatedTable).
var relatedWords = buildRelated(relatedTable)

func buildRelated(table []string) map[string][]string {
	out := map[string][]string{}
	for _, line := range table {
		head, rest, _ := strings.Cut(line, ":")
		var rel []string
		for _, f := range strings.Fields(rest) {
			rel = append(rel, Tokenize(f)...)
		}
		for _, h := range strings.Fields(head) {
			for _, t := range Tokenize(h) {
				out[t] = append(out[t], rel...)
			}
		}
	}
	return out
}

// relatedTable: "word word2: related related2" — a query with word (or
// word2) also looks for the related words, at weightRelated. General
// vocabulary of how people ask for what tools do.
var relatedTable = []string{
	// actions
	"get fetch retrieve obtain: read show view",
	"show display view see: get list read",
	"read open: get fetch view",
	"find search lookup look locate discover: search find query lookup",
	"create add new make insert: create add new insert",
	"leave write: create add",
	"delete remove drop destroy erase discard: delete remove drop clean",
	"throw away junk: clean remove delete",
	"update edit modify change alter: update edit modify patch set",
	"rename: move rename",
	"send post publish push broadcast notify tell announce: send post push message publish",
	"list enumerate all every: list all",
	"run execute start trigger launch invoke: run execute start trigger",
	"stop cancel halt terminate end kill abort: stop cancel terminate kill",
	"comment reply remark: comment note reply",
	"save store keep record: save create store",
	"remember memorize: memory observation entity knowledge store",
	"recall: memory knowledge search node",
	"upload attach: upload file attachment",
	"download export: download export",
	"convert turn transform: convert",
	"compare comparison: compare bar column",
	"visualize visual visually picture plot graph: chart graph diagram visualize",
	"sketch draw: diagram draw",
	"think reason plan planning: thinking reasoning thought",
	"schedule plan: schedule",
	"mute silence quiet alerting alert: mute downtime monitor alert",
	"approve accept: approve review",
	"review: review",
	"merge integrate combine: merge",
	"undo revert rollback roll: reset revert rollback rollout",
	"shelve park: stash",
	"sync catch date: pull fetch",
	"share teammate colleague colleagues: push remote",
	"type enter input fill: type fill input",
	"pick choose select dropdown: select option",
	"press hit: press key",
	"click tap: click",
	"hover: hover mouse",
	"visit navigate browse go: navigate open url page",
	"back previous return: back",
	"capture snap: screenshot snapshot",
	"print: pdf",
	"scrape extract: scrape extract content",
	"crawl: crawl",
	"watch track monitor: monitor",
	"lint style: lint",
	"rank rerank order sort: rerank rank",
	"exec shell terminal inside: exec process terminal shell",
	"scale: scale replicas",
	// things
	"folder directory dir: directory folder",
	"file document doc: file document",
	"docs documentation manual reference api: documentation docs library",
	"picture photo image: image picture photo screenshot",
	"chat channel team: slack message channel",
	"message text: message",
	"repo repository project: repository project",
	"pr mr: pull request merge",
	"issue ticket bug: issue ticket story bug",
	"story: story issue",
	"sprint cycle iteration: iteration",
	"task todo work: todo task story issue",
	"report reported: issue",
	"history author wrote who: log blame history",
	"when: date log history",
	"untracked artifact artifacts: clean untracked",
	"row record entry: record row document",
	"table sheet spreadsheet collection: table collection",
	"database db: database",
	"sql: sql query",
	"fast faster speed slow performance: index performance explain",
	"cpu memory load usage: metric metrics usage",
	"disk space storage big size: storage size stats",
	"how many number count: count",
	"host server machine node: host server",
	"error exception crash failing fail broken complain complaint: error exception console log failure",
	"log logs: log",
	"web internet online: web search",
	"news headline: news",
	"page site website url link: page web url site",
	"article content text: content text extract",
	"paper papers academic study research: paper research",
	"report deep thorough: research",
	"address coordinate coordinates latitude longitude: geocode coordinates address",
	"city place location where: place location geocode",
	"nearest near nearby: local nearby place",
	"distance far road drive route travel: directions distance route",
	"high height altitude elevation sea: elevation",
	"sleep stay lodging accommodation hotel rent room: listing airbnb accommodation stay",
	"trend time timeline: line trend area",
	"budget share split proportion percent: pie proportion",
	"hierarchy org organization: organization hierarchy",
	"diagram architecture flowchart: diagram flow",
	"icon icons asset assets mockup mock design: image figma",
	"javascript js script: javascript script evaluate",
	"dark theme scheme: emulate media color",
	"http api endpoint request: http request",
	"network traffic: network request",
	"container pod cluster deployment: pod kubernetes deployment",
	"release version: release rollout version",
	"follower followers subscriber everyone audience: broadcast follower",
	"sale promotion campaign: broadcast",
	"video youtube: video transcript",
	"permission access allowed self me myself bot: self user whoami",
	"competitor pricing: monitor",
	"passage passages relevance relevant best: rerank",
}

// stopWords carry no meaning for matching a tool.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "to": true, "in": true, "on": true, "for": true,
	"and": true, "or": true, "with": true, "by": true, "from": true, "at": true, "as": true, "is": true,
	"are": true, "be": true, "it": true, "its": true, "this": true, "that": true, "into": true,
	"i": true, "me": true, "my": true, "we": true, "our": true, "you": true, "your": true,
	"please": true, "want": true, "need": true, "can": true, "some": true, "all": true,
	"do": true, "does": true, "s": true, "t": true, "d": true, "ll": true, "m": true, "re": true, "ve": true,
}

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
// meet: "issues", "issue"; "listing", "listed", "list"; "queries", "query".
func stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 5 && strings.HasSuffix(w, "ing"):
		return undouble(w[:n-3])
	case n > 4 && strings.HasSuffix(w, "ed"):
		return undouble(w[:n-2])
	case n > 4 && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes")):
		return w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
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

// stopWords carry no meaning for matching a tool.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "to": true, "in": true, "on": true, "for": true,
	"and": true, "or": true, "with": true, "by": true, "from": true, "at": true, "as": true, "is": true,
	"are": true, "be": true, "it": true, "its": true, "this": true, "that": true, "into": true,
	"i": true, "me": true, "my": true, "we": true, "our": true, "you": true, "your": true,
	"please": true, "want": true, "need": true, "can": true, "some": true, "all": true,
	"do": true, "does": true, "s": true, "t": true, "d": true, "ll": true, "m": true, "re": true, "ve": true,
}

// synonyms maps a stemmed query word to words that often name the same
// action in tool names and descriptions; they count weightSynonym each.
var synonyms = map[string][]string{
	"get":      {"fetch", "retrieve", "read", "show"},
	"fetch":    {"get", "retrieve", "read"},
	"retrieve": {"get", "fetch"},
	"show":     {"get", "list", "view", "display"},
	"find":     {"search", "lookup", "query"},
	"search":   {"find", "lookup", "query"},
	"lookup":   {"find", "search", "get"},
	"create":   {"add", "new", "make"},
	"add":      {"create", "insert", "new"},
	"make":     {"create"},
	"new":      {"create"},
	"delete":   {"remove", "drop", "destroy"},
	"remove":   {"delete", "drop"},
	"drop":     {"delete", "remove"},
	"update":   {"edit", "modify", "change", "set"},
	"edit":     {"update", "modify", "change"},
	"change":   {"update", "edit", "modify", "set"},
	"modify":   {"update", "edit", "change"},
	"send":     {"post", "write", "publish", "create"},
	"list":     {"enumerate", "show"},
	"run":      {"execute", "start", "trigger"},
	"execute":  {"run"},
	"start":    {"run", "launch", "begin"},
	"stop":     {"cancel", "halt", "terminate", "end"},
	"cancel":   {"stop", "abort", "delete"},
	"email":    {"mail", "message"},
	"mail":     {"email"},
	"message":  {"msg", "chat"},
	"picture":  {"image", "photo"},
	"photo":    {"image", "picture"},
	"image":    {"picture", "photo"},
	"user":     {"account", "member"},
	"customer": {"client", "account"},
	"cost":     {"price", "amount"},
	"price":    {"cost", "amount"},
	"weather":  {"forecast"},
	// Question words and verbs that say which action is meant.
	"what":     {"get", "list"},
	"which":    {"list", "search"},
	"how":      {"get", "count"},
	"when":     {"get"},
	"who":      {"list", "search"},
	"read":     {"get", "fetch"},
	"view":     {"get"},
	"latest":   {"newest", "list"},
	"recent":   {"newest", "list"},
	"schedule": {"create"},
	"save":     {"create", "store"},
	"set":      {"create", "update"},
	"open":     {"create"},
	"write":    {"create"},
	"any":      {"list", "search"},
	"upload":   {"create", "add"},
	"book":     {"create", "reserve"},
	"block":    {"create"},
	"restore":  {"get", "revert"},
	"warning":  {"alert"},
	"alert":    {"warning"},
	"spend":    {"cost"},
	"spent":    {"cost"},
	"post":     {"send", "publish", "create"},
	"forecast": {"weather"},
}

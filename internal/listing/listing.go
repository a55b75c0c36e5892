package listing

import (
	"context"
	"crypto/sha256"
	"encoding/json"
)

// MaxPages bounds the pages of a listing whatever their size (a server
// that hands out new cursors with empty pages).
const MaxPages = 1000

// Limits are the bounds of one listing; negative means none.
type Limits struct {
	Items int
	Bytes int64
}

// LimitError reports a listing given up: the fields of the root's
// ListLimitError, in its order, so that one converts to the other.
type LimitError struct {
	Server, Method string
	Pages, Items   int
	Bytes          int64
	Bound          string
	Limit          int64
}

// Error says which bound the listing passed.
func (e *LimitError) Error() string {
	return "listing " + e.Method + " passed its bound " + e.Bound
}

// Pages appends every page of a listing to out, asking page for each (s
// is passed through). On failure it returns the index of the page that
// failed: page's error, or a *LimitError.
func Pages[T, S any](ctx context.Context, s S, method string, out []T, page func(context.Context, S, string) ([]T, string, error), lim Limits) ([]T, int, error) {
	cursor := ""
	seen := make(map[[sha256.Size]byte]int) // cursor → the page that gave it
	var size int64
	for n := 0; ; n++ {
		stop := func(pages int, bound string, limit int64) ([]T, int, error) {
			return out, n, &LimitError{Method: method, Pages: pages, Items: len(out), Bytes: size, Bound: bound, Limit: limit}
		}
		if n >= MaxPages {
			return stop(n, "pages", MaxPages)
		}
		items, next, err := page(ctx, s, cursor)
		if err != nil {
			return out, n, err
		}
		out = append(out, items...)
		size += jsonSize(items) + int64(len(next))
		switch {
		case lim.Items >= 0 && len(out) > lim.Items:
			return stop(n+1, "MaxListItems", int64(lim.Items))
		case lim.Bytes >= 0 && size > lim.Bytes:
			return stop(n+1, "MaxListBytes", lim.Bytes)
		case next == "":
			return out, n, nil
		}
		key := sha256.Sum256([]byte(next))
		if first, dup := seen[key]; dup {
			return stop(n+1, "cursor", int64(first+1))
		}
		seen[key] = n
		cursor = next
	}
}

// jsonSize is the size of items as JSON.
func jsonSize[T any](items []T) int64 {
	var w countingWriter
	enc := json.NewEncoder(&w)
	for _, it := range items {
		if enc.Encode(it) != nil {
			w.n += 2 // unencodable: count it as small
		}
	}
	return w.n
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

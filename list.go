package mcpadapter

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpadapter/mcpadapter/internal/cache"
	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/sdkerr"
	"github.com/mcpadapter/mcpadapter/internal/wire"
)

// Bounds on one listing: all the pages of one tools/list, prompts/list,
// resources/list or resources/templates/list together. A server whose
// cursor never ends, or that sends pages of thousands of items, would
// otherwise hold the client for minutes and gigabytes.
const (
	// DefaultMaxListItems is the number of items a listing may have
	// when ClientOptions.MaxListItems is zero.
	DefaultMaxListItems = 50_000
	// DefaultMaxListBytes is the size a listing may have, counted as the
	// JSON of its items and cursors, when ClientOptions.MaxListBytes is
	// zero.
	DefaultMaxListBytes = 64 << 20
)

// maxPages bounds the pages of a listing whatever their size (a server
// that hands out new cursors with empty pages).
const maxPages = 1000

// ListLimitError reports a listing that was given up: it passed one of its
// bounds, or the server handed out a cursor it had handed out before (its
// pagination loops). Nothing of the listing is returned.
type ListLimitError struct {
	// Server names the server and Method the listing, such as
	// "tools/list".
	Server, Method string
	// Pages, Items and Bytes are what had been read: pages, items, and
	// their size as JSON (items and cursors).
	Pages, Items int
	Bytes        int64
	// Bound names what was passed: "MaxListItems" or "MaxListBytes" (the
	// ClientOptions), "pages" (more than 1,000 pages) or "cursor" (a
	// cursor handed out twice; Limit is then the page that first gave it).
	Bound string
	Limit int64
}

func (e *ListLimitError) Error() string {
	head := fmt.Sprintf("mcpadapter: server %q: %s: ", e.Server, e.Method)
	switch e.Bound {
	case "cursor":
		return head + fmt.Sprintf("page %d gave the cursor that page %d gave: the server's pagination loops", e.Pages, e.Limit)
	case "pages":
		return head + fmt.Sprintf("more than %d pages (%d items); giving up", e.Limit, e.Items)
	case "MaxListBytes":
		return head + fmt.Sprintf("more than %d bytes in %d pages (ClientOptions.MaxListBytes); the listing is too long or never ends", e.Limit, e.Pages)
	}
	return head + fmt.Sprintf("more than %d items in %d pages (ClientOptions.%s); the listing is too long or never ends", e.Limit, e.Pages, e.Bound)
}

// listLimits are the bounds of one listing; negative means none.
type listLimits struct {
	items int
	bytes int64
}

func (c *Client) listLimits() listLimits {
	l := listLimits{items: c.opts.MaxListItems, bytes: int64(c.opts.MaxListBytes)}
	if l.items == 0 {
		l.items = DefaultMaxListItems
	}
	if l.bytes == 0 {
		l.bytes = DefaultMaxListBytes
	}
	return l
}

// listAll returns every item of the listing method, asking page for each
// page. With the response cache, a cached first page may carry a cursor
// the server no longer accepts (its next page was evicted, or the server
// forgot the cursor): when a later page fails with a server error, the
// whole listing is asked anew, once, bypassing the cached pages. A listing
// over its bounds is a *ListLimitError.
func listAll[T any](ctx context.Context, c *Client, method string, page func(context.Context, *engine.Session, string) ([]T, string, error)) ([]T, error) {
	if c.opts.Telemetry == nil {
		return listAllPages(ctx, c, method, page)
	}
	ctx, end := c.startOp(ctx, method, "")
	out, err := listAllPages(ctx, c, method, page)
	end(c.opResult(ctx, nil, err))
	return out, err
}

// listAllPages is listAll without the Telemetry.
func listAllPages[T any](ctx context.Context, c *Client, method string, page func(context.Context, *engine.Session, string) ([]T, string, error)) ([]T, error) {
	var (
		out      []T
		limitErr *ListLimitError
	)
	lim := c.listLimits()
	err := c.send(ctx, c.request(method, ""), func(ctx context.Context, s *engine.Session) error {
		for attempt := 0; ; attempt++ {
			var (
				failedPage int
				err        error
			)
			out, failedPage, err = listPagesOnce(cache.WithListPages(ctx), s, method, out[:0], page, lim)
			if errors.As(err, &limitErr) {
				// The server answered: not a transport failure.
				limitErr.Server = c.name
				return nil
			}
			if err == nil || attempt > 0 || failedPage == 0 || c.cache == nil || cache.ModeOf(ctx) != CacheUse || !sdkerr.IsServerError(err) {
				return err
			}
			c.log.Debug("a later page of a cached listing failed; listing anew from the server", "op", method, "page", failedPage, "cause", wire.RedactURLSecrets(err.Error()))
			ctx = WithCacheMode(ctx, CacheRefresh)
		}
	})
	if err == nil && limitErr != nil {
		return nil, limitErr
	}
	return out, err
}

// listPagesOnce appends every page of a listing to out. On failure it
// returns the index of the page that failed.
func listPagesOnce[T any](ctx context.Context, s *engine.Session, method string, out []T, page func(context.Context, *engine.Session, string) ([]T, string, error), lim listLimits) ([]T, int, error) {
	cursor := ""
	seen := make(map[[sha256.Size]byte]int) // cursor → the page that gave it
	var size int64
	for n := 0; ; n++ {
		stop := func(pages int, bound string, limit int64) ([]T, int, error) {
			return out, n, &ListLimitError{Method: method, Pages: pages, Items: len(out), Bytes: size, Bound: bound, Limit: limit}
		}
		if n >= maxPages {
			return stop(n, "pages", maxPages)
		}
		items, next, err := page(ctx, s, cursor)
		if err != nil {
			return out, n, err
		}
		out = append(out, items...)
		size += jsonSize(items) + int64(len(next))
		switch {
		case lim.items >= 0 && len(out) > lim.items:
			return stop(n+1, "MaxListItems", int64(lim.items))
		case lim.bytes >= 0 && size > lim.bytes:
			return stop(n+1, "MaxListBytes", lim.bytes)
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

package mcpadapter

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpadapter/mcpadapter/internal/cache"
	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/listing"
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

// listLimits are the bounds of c's listings.
func (c *Client) listLimits() listing.Limits {
	l := listing.Limits{Items: c.opts.MaxListItems, Bytes: int64(c.opts.MaxListBytes)}
	if l.Items == 0 {
		l.Items = DefaultMaxListItems
	}
	if l.Bytes == 0 {
		l.Bytes = DefaultMaxListBytes
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
	end(c.opResult(ctx, false, err))
	return out, err
}

// listAllPages is listAll without the Telemetry.
func listAllPages[T any](ctx context.Context, c *Client, method string, page func(context.Context, *engine.Session, string) ([]T, string, error)) ([]T, error) {
	var (
		out      []T
		limitErr *listing.LimitError
	)
	lim := c.listLimits()
	err := c.send(ctx, c.request(method, ""), func(ctx context.Context, s *engine.Session) error {
		for attempt := 0; ; attempt++ {
			var (
				failedPage int
				err        error
			)
			out, failedPage, err = listing.Pages(cache.WithListPages(ctx), s, method, out[:0], page, lim)
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
		le := ListLimitError(*limitErr)
		return nil, &le
	}
	return out, err
}

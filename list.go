package mcpadapter

import (
	"context"
	"fmt"

	"github.com/mcpadapter/mcpadapter/internal/wire"
)

// maxPages bounds a paginated listing.
const maxPages = 1000

// listAll returns every item of the listing method, asking page for each
// page. With the response cache, a cached first page may carry a cursor
// the server no longer accepts (its next page was evicted, or the server
// forgot the cursor): when a later page fails with a server error, the
// whole listing is asked anew, once, bypassing the cached pages.
func listAll[T any](ctx context.Context, c *Client, method string, page func(context.Context, *session, string) ([]T, string, error)) ([]T, error) {
	var out []T
	err := c.send(ctx, c.request(method, ""), func(ctx context.Context, s *session) error {
		for attempt := 0; ; attempt++ {
			var (
				failedPage int
				err        error
			)
			out, failedPage, err = listPagesOnce(withListPages(ctx), s, method, out[:0], page)
			if err == nil || attempt > 0 || failedPage == 0 || c.cache == nil || cacheModeOf(ctx) != CacheUse || !isServerError(err) {
				return err
			}
			c.log.Debug("a later page of a cached listing failed; listing anew from the server", "op", method, "page", failedPage, "cause", wire.RedactURLSecrets(err.Error()))
			ctx = WithCacheMode(ctx, CacheRefresh)
		}
	})
	return out, err
}

// listPagesOnce appends every page of a listing to out. On failure it
// returns the index of the page that failed.
func listPagesOnce[T any](ctx context.Context, s *session, method string, out []T, page func(context.Context, *session, string) ([]T, string, error)) ([]T, int, error) {
	cursor := ""
	for n := 0; ; n++ {
		if n >= maxPages {
			return out, n, fmt.Errorf("%s returned more than %d pages; giving up (a cursor loop?)", method, maxPages)
		}
		items, next, err := page(ctx, s, cursor)
		if err != nil {
			return out, n, err
		}
		out = append(out, items...)
		if next == "" {
			return out, n, nil
		}
		if next == cursor {
			return out, n, fmt.Errorf("%s returned the same cursor %q twice", method, next)
		}
		cursor = next
	}
}

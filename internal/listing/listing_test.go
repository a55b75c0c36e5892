package listing

import (
	"context"
	"errors"
	"strconv"
	"testing"
)

// pager serves pages of two items, with the cursors next gives.
func pager(next func(page int) string) func(context.Context, *int, string) ([]string, string, error) {
	return func(_ context.Context, calls *int, _ string) ([]string, string, error) {
		*calls++
		return []string{"a", "b"}, next(*calls), nil
	}
}

// TestPagesBounds checks each bound: the whole listing within them, and
// a *LimitError naming the bound passed, with what had been read.
func TestPagesBounds(t *testing.T) {
	ctx := context.Background()
	three := func(p int) string {
		if p < 3 {
			return "c" + strconv.Itoa(p)
		}
		return ""
	}
	for _, c := range []struct {
		name  string
		next  func(int) string
		lim   Limits
		bound string
		limit int64
		pages int
	}{
		{"fits", three, Limits{Items: -1, Bytes: -1}, "", 0, 0},
		{"items", three, Limits{Items: 3, Bytes: -1}, "MaxListItems", 3, 2},
		{"bytes", three, Limits{Items: -1, Bytes: 10}, "MaxListBytes", 10, 2}, // "a"\n"b"\n + c1 = 10, then 20
		{"cursor", func(p int) string { return "c" + strconv.Itoa(min(p, 2)) }, Limits{Items: -1, Bytes: -1}, "cursor", 2, 3},
		{"pages", func(p int) string { return "c" + strconv.Itoa(p) }, Limits{Items: -1, Bytes: -1}, "pages", MaxPages, MaxPages},
	} {
		calls := 0
		out, _, err := Pages(ctx, &calls, "tools/list", nil, pager(c.next), c.lim)
		var le *LimitError
		switch {
		case c.bound == "":
			if err != nil || len(out) != 6 {
				t.Errorf("%s: %d items, %v; want 6", c.name, len(out), err)
			}
		case !errors.As(err, &le):
			t.Errorf("%s: err = %v, want a *LimitError", c.name, err)
		case le.Bound != c.bound || le.Limit != c.limit || le.Pages != c.pages || le.Items != len(out) || le.Method != "tools/list":
			t.Errorf("%s: %+v; want bound %s, limit %d, pages %d", c.name, le, c.bound, c.limit, c.pages)
		}
	}
}

// TestPagesFailure checks that a page's error comes back with the index
// of the failed page.
func TestPagesFailure(t *testing.T) {
	boom := errors.New("boom")
	page := func(_ context.Context, _ struct{}, cursor string) ([]int, string, error) {
		if cursor == "c" {
			return nil, "", boom
		}
		return []int{1}, "c", nil
	}
	out, failed, err := Pages(context.Background(), struct{}{}, "prompts/list", nil, page, Limits{Items: -1, Bytes: -1})
	if !errors.Is(err, boom) || failed != 1 || len(out) != 1 {
		t.Fatalf("got %v, page %d, %v; want boom at page 1", out, failed, err)
	}
}

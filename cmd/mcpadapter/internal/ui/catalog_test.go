package ui_test

import (
	"fmt"
	"sort"
	"testing"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/ui"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestBrowserCatalog1000 lists a catalog of 1,000 tools (ten servers of
// a hundred) and filters it, and reports how long the page took: from
// navigation to a page ready to use, to render the tool list, and to
// filter it at each keystroke. The numbers are measured by the page
// (performance.now, layout included) and logged, beside the same page
// over one server of a hundred tools as the peer; the test asserts what
// the user sees, not how fast.
func TestBrowserCatalog1000(t *testing.T) {
	chromium(t)
	type timing struct {
		ReadyMs      float64   `json:"readyMs"`
		StateMs      float64   `json:"stateMs"`
		RenderMs     float64   `json:"renderMs"`
		ToolsBuildMs float64   `json:"toolsBuildMs"`
		FilterMs     []float64 `json:"filterMs"`
	}
	measure := func(domains []string) timing {
		rec := ui.NewRecorder()
		var targets []named
		for _, d := range domains {
			targets = append(targets, named{name: d, target: testserver.Catalog(d)})
		}
		s := newSession(t, rec, "catalog", nil, targets...)
		srv := startUI(t, s, rec, nil)
		p := openPage(t, srv)
		p.tab("tools")
		p.wait(`#view-tools[data-state="ready"]`)
		want := len(domains) * testserver.CatalogToolsPerDomain
		if got := p.text(`[data-testid="tool-count"]`); got != fmt.Sprintf("%d of %d tools", want, want) {
			t.Errorf("the count says %q", got)
		}
		// The list draws a hundred at a time, the next when its end
		// scrolls into view.
		if n := p.count(`[data-testid="tool-item"]`); n != min(want, 100) {
			t.Errorf("%d tools drawn, want %d", n, min(want, 100))
		}
		if want > 100 {
			p.eval(`(() => { const l = document.querySelector('[data-testid="tool-list"]'); l.scrollTop = l.scrollHeight; return 0 })()`, nil)
			p.wait(`[data-testid="tool-list"][data-drawn="200"]`)
			if n := p.count(`[data-testid="tool-item"]`); n != 200 {
				t.Errorf("after scrolling to the end, %d tools drawn, want 200", n)
			}
		}
		p.typeIn(`[data-testid="tool-filter"]`, "export")
		p.wait(`[data-testid="tool-list"][data-query="export"]`)
		var shown, matching int
		p.eval(`+document.querySelector('[data-testid="tool-count"]').dataset.shown`, &shown)
		p.eval(`App.state.tools.filter(t => (t.name + " " + t.server + " " + (t.title || "") + " " + (t.description || "")).toLowerCase().includes("export")).length`, &matching)
		if shown != matching || shown == 0 || shown == want {
			t.Errorf("filtering on export shows %d tools; %d match", shown, matching)
		}
		if want == 1000 {
			p.screenshot("catalog")
		}
		var tm timing
		p.eval(`App.metrics`, &tm)
		return tm
	}
	domains := testserver.CatalogDomains()
	if len(domains)*testserver.CatalogToolsPerDomain != 1000 {
		t.Fatalf("the catalog has %d tools", len(domains)*testserver.CatalogToolsPerDomain)
	}
	peer := measure(domains[:1])
	big := measure(domains)
	for _, r := range []struct {
		n  int
		tm timing
	}{{100, peer}, {1000, big}} {
		t.Logf("%4d tools: page ready %s after navigation (of which the server connecting and listing %s, the first render %s); tool list rendered in %s; filter per keystroke %s",
			r.n, ms(r.tm.ReadyMs), ms(r.tm.StateMs), ms(r.tm.RenderMs), ms(r.tm.ToolsBuildMs), summary(r.tm.FilterMs))
	}
	if peer.ToolsBuildMs > 0 {
		t.Logf("1000 vs 100 tools: rendering x%.1f, filtering (median) x%.1f", big.ToolsBuildMs/peer.ToolsBuildMs, median(big.FilterMs)/max(median(peer.FilterMs), 0.01))
	}
}

func ms(v float64) string { return fmt.Sprintf("%.1f ms", v) }

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func summary(v []float64) string {
	if len(v) == 0 {
		return "(none)"
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return fmt.Sprintf("median %.2f ms, max %.2f ms over %d keystrokes", s[len(s)/2], s[len(s)-1], len(s))
}

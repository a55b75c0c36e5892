package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/demo"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/session"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/ui"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// named is a server for a session: its name and its target.
type named struct {
	name   string
	target any
	// unchecked sends the form's arguments to the server without the
	// adapter's argument check, for a test about what the server does
	// with arguments its schema refuses.
	unchecked bool
}

// newSession opens each target as its own adapter (tools named
// server_tool), as the demo does, with the trace going to rec and the
// servers' questions asked in the page.
func newSession(t *testing.T, rec *ui.Recorder, source string, stop func(), targets ...named) *session.Session {
	t.Helper()
	s := session.Prefixed(source, stop)
	t.Cleanup(s.Close)
	for _, tg := range targets {
		c, err := mcpadapter.NewClient(tg.target, &mcpadapter.ClientOptions{Name: tg.name, Trace: true, Logger: rec.Logger()})
		if err != nil {
			t.Fatal(err)
		}
		opts := &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt, SkipUnavailable: true}
		if tg.unchecked {
			opts.Transforms = map[string]*mcpadapter.ServerTransform{tg.name: {SkipArgumentCheck: true}}
		}
		ad, err := mcpadapter.New(c, opts)
		if err != nil {
			t.Fatal(err)
		}
		s.Add(ad)
	}
	return s
}

// demoSession is the CLI's demo: weather (2026-07-28) over streamable
// HTTP on a loopback port, math (handshake era) in-process.
func demoSession(t *testing.T, rec *ui.Recorder) *session.Session {
	t.Helper()
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return demo.Weather() }, &mcp.StreamableHTTPOptions{Stateless: true}))
	return newSession(t, rec, "demo", hs.Close, named{name: "weather", target: hs.URL + "/mcp"}, named{name: "math", target: demo.Math()})
}

// startUI serves an inspector of s on a loopback port until the test ends.
func startUI(t *testing.T, s *session.Session, rec *ui.Recorder, target *ui.Target) *ui.Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ui.Serve(l, &ui.Options{Session: s, Recorder: rec, Target: target})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// chromium returns the browser to test with, skipping the test when there
// is none (and failing it under CI=true).
func chromium(t *testing.T) string {
	t.Helper()
	path := os.Getenv("MCPADAPTER_CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no Chromium at %s (CI=true): .ci/run installs Debian's chromium package", path)
		}
		t.Skipf("no Chromium at %s: install Debian's chromium package (or set MCPADAPTER_CHROMIUM) to run the browser tests", path)
	}
	return path
}

// page is a headless Chromium tab on an inspector.
type page struct {
	t   *testing.T
	ctx context.Context
	// errs are the page's uncaught exceptions.
	mu   sync.Mutex
	errs []string
}

// openPage starts a fresh headless Chromium (own profile, no network of
// its own) and opens the inspector's one-time URL in it.
func openPage(t *testing.T, srv *ui.Server) *page {
	t.Helper()
	p := newPage(t)
	p.do(chromedp.Navigate(srv.URL()), chromedp.WaitVisible(chromedp.CSS(`body[data-state="ready"]`)))
	return p
}

// newPage starts a fresh headless Chromium with an empty tab.
func newPage(t *testing.T) *page {
	t.Helper()
	path := chromium(t)
	profile := t.TempDir()
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path), chromedp.UserDataDir(profile), chromedp.WindowSize(1280, 860),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true), chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true))
	ctx, cancelTab := chromedp.NewContext(alloc)
	ctx, cancelTime := context.WithTimeout(ctx, 8*time.Minute)
	p := &page{t: t, ctx: ctx}
	// Start the browser, then collect the page's uncaught exceptions
	// until the test ends.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	exceptions := chromedp.Events(ctx, runtime.ExceptionThrown)
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			p.mu.Lock()
			p.errs = append(p.errs, exceptionText(ev.ExceptionDetails))
			p.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		p.mu.Lock()
		for _, e := range p.errs {
			t.Errorf("the page threw: %s", e)
		}
		p.mu.Unlock()
		cancelTime()
		cancelTab()
		cancelAlloc()
		<-watching
	})
	return p
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "?"
	}
	s := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		s += " " + d.Exception.Description
	}
	return fmt.Sprintf("%s (%s:%d)", s, d.URL, d.LineNumber+1)
}

// do runs actions, failing the test on an error.
func (p *page) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

// wait waits until an element matching sel is in the page.
func (p *page) wait(sel string) {
	p.t.Helper()
	p.do(chromedp.WaitReady(chromedp.CSS(sel)))
}

// click clicks the (visible) element sel.
func (p *page) click(sel string) {
	p.t.Helper()
	p.do(chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel)))
}

// tab shows one of the page's views.
func (p *page) tab(name string) {
	p.t.Helper()
	p.click(`[data-testid="tab-` + name + `"]`)
}

// typeIn types text into the input sel, as a user would.
func (p *page) typeIn(sel, text string) {
	p.t.Helper()
	p.do(chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.SendKeys(chromedp.CSS(sel), text))
}

// choose picks the option with value in the select sel.
func (p *page) choose(sel, value string) {
	p.t.Helper()
	p.do(chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.SetValue(chromedp.CSS(sel), value),
		chromedp.Evaluate[chromedp.Void](`document.querySelector(`+jsString(sel)+`).dispatchEvent(new Event("change", {bubbles: true}))`))
}

// text returns the text of the element sel.
func (p *page) text(sel string) string {
	p.t.Helper()
	p.wait(sel)
	s, err := chromedp.Run(p.ctx, chromedp.TextContent(chromedp.CSS(sel)))
	if err != nil {
		p.t.Fatalf("browser: %v", err)
	}
	return s
}

// eval evaluates a JavaScript expression (awaiting a promise) into out.
func (p *page) eval(js string, out any) {
	p.t.Helper()
	raw, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]byte](js, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("browser: evaluating %s: %v", js, err)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			p.t.Fatalf("browser: %s gave %s: %v", js, raw, err)
		}
	}
}

// count returns how many elements match sel.
func (p *page) count(sel string) int {
	p.t.Helper()
	var n int
	p.eval(`document.querySelectorAll(`+jsString(sel)+`).length`, &n)
	return n
}

// screenshot saves the page as NAME.png in the directory
// MCPADAPTER_UI_SCREENSHOTS names, when it is set (docs/ui).
func (p *page) screenshot(name string) {
	p.t.Helper()
	dir := os.Getenv("MCPADAPTER_UI_SCREENSHOTS")
	if dir == "" {
		return
	}
	p.eval(`(() => { window.scrollTo(0, 0); document.getElementById("toast").hidden = true; return 0 })()`, nil)
	png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\u2028", `\u2028`, "\u2029", `\u2029`)
	return `"` + r.Replace(s) + `"`
}

package ui_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/ui"
)

// attackPage is a page that tries, with the user's browser, every
// request a page can make to the inspector at base without script on
// the inspector's origin: form posts (text/plain and urlencoded, the
// "simple" requests a browser sends without asking), no-cors and cors
// fetches with credentials, an image, a script and a nested sandboxed
// frame (an opaque "null" origin). It writes what it could read into
// window.results.
func attackPage(base string) string {
	call := `{"server":"weather","tool":"weather_forecast","args":{"city":"Paris"}}`
	return `<!doctype html><title>attack</title><iframe name="sink"></iframe>
<form id="f1" method="POST" enctype="text/plain" target="sink" action="` + base + `/api/call"><input name='` + call[:len(call)-1] + `,"x":"' value='"}'></form>
<form id="f2" method="POST" target="sink" action="` + base + `/api/reconnect"><input name="a" value="b"></form>
<script>
window.results = [];
const say = (m) => results.push(m);
document.getElementById("f1").submit();
setTimeout(() => document.getElementById("f2").submit(), 200);
fetch("` + base + `/api/call", {method: "POST", mode: "no-cors", credentials: "include", headers: {"Content-Type": "text/plain"}, body: '` + call + `'}).then(() => say("no-cors sent"), () => say("no-cors failed"));
fetch("` + base + `/api/state", {credentials: "include"}).then((r) => r.text()).then((t) => say("read:" + t.slice(0, 40)), () => say("cors blocked"));
fetch("` + base + `/api/call", {method: "POST", credentials: "include", headers: {"Content-Type": "application/json"}, body: '` + call + `'}).then((r) => say("cors post:" + r.status), () => say("cors post blocked"));
const img = new Image(); img.onload = () => say("img loaded"); img.onerror = () => say("img error"); img.src = "` + base + `/api/state?refresh=1";
const sc = document.createElement("script"); sc.onload = () => say("script loaded"); sc.onerror = () => say("script error"); sc.src = "` + base + `/api/saved/export.json"; document.body.append(sc);
const fr = document.createElement("iframe");
fr.sandbox = "allow-scripts allow-forms";
fr.srcdoc = '<form method=POST enctype=text/plain action="` + base + `/api/call"><input name=x value=y></form><script>fetch("` + base + `/api/call",{method:"POST",mode:"no-cors",credentials:"include",body:"{}"});document.forms[0].submit()<\/script>';
document.body.append(fr);
</script>`
}

// TestBrowserCrossOriginPages opens, in the browser that holds the
// inspector's cookie and key, an attacker's page on another loopback
// port and on localhost: none of its requests
// makes a call or a reconnect, and it reads nothing.
func TestBrowserCrossOriginPages(t *testing.T) {
	chromium(t)
	rec := ui.NewRecorder()
	srv := startUI(t, demoSession(t, rec), rec, nil)
	u, _ := url.Parse(srv.URL())
	base := "http://" + u.Host
	var hits atomic.Int32 // the browser may ask the attacker for more (a favicon) at any time
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, attackPage(base))
	}))
	defer attacker.Close()
	p := openPage(t, srv)
	sends := func() int {
		var n int
		p.eval(`App.api("GET", "/api/trace/export.json").then((es) => es.filter((e) => e.dir === "send").length)`, &n)
		return n
	}
	before := sends()

	au, _ := url.Parse(attacker.URL)
	for _, origin := range []string{attacker.URL, "http://localhost:" + au.Port()} {
		p.do(chromedp.Navigate(origin + "/attack"))
		var results []string
		p.eval(`new Promise((done) => { const t0 = Date.now(); const tick = () => {
			if (results.length >= 5 || Date.now() - t0 > 30000) done(results); else setTimeout(tick, 50); }; tick(); })`, &results)
		t.Logf("%s: %v", origin, results)
		for _, r := range results {
			if r == "img loaded" || r == "script loaded" || (len(r) > 5 && r[:5] == "read:") || r == "cors post:200" {
				t.Errorf("%s: %s", origin, r)
			}
		}
		if !slices.Contains(results, "cors blocked") {
			t.Errorf("%s read the inspector: %v", origin, results)
		}
	}
	if n := hits.Load(); n < 2 {
		t.Fatalf("the attacker's page was loaded %d times", n)
	}

	// Back on the inspector: no call, no new request to a server.
	p.do(chromedp.Navigate(base + "/"))
	p.wait(`body[data-state="ready"]`)
	var calls []any
	p.eval(`App.api("GET", "/api/calls")`, &calls)
	if len(calls) != 0 {
		t.Errorf("the attacker's pages made %d calls", len(calls))
	}
	if after := sends(); after != before {
		t.Errorf("the attacker's pages made the inspector send %d messages to its servers", after-before)
	}
}

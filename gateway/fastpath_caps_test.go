package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// capsClient is one client of the gateway: a principal and the
// capabilities its requests' _meta writes.
type capsClient struct {
	principal string
	caps      string
}

// capsCall is the plain call of tool (whoami, which answers with the
// _meta its server got) by cl, with id.
func capsCall(cl capsClient, id int, tool string) fastCase {
	body := leanCall(fmt.Sprint(id), `"`+tool+`"`, `{}`,
		`"io.modelcontextprotocol/clientInfo":{"name":"`+cl.principal+`","version":"1"},"io.modelcontextprotocol/clientCapabilities":`+cl.caps)
	return fastCase{name: cl.principal + " " + tool, body: body,
		header: map[string]string{"Mcp-Name": tool, "Authorization": "Bearer " + cl.principal}}
}

// TestFastPathCapabilitiesOfTwoPrincipals: two principals, each with
// clients of different capabilities (and one written twice, with other
// white space), call servers behind the gateway (over streamable HTTP and
// over stdio) at once, interleaved, on the fast path; each call's server
// gets the capabilities of the client that made it, as the gateway without
// the fast path sends them, whatever calls went before or run beside it
// (the capabilities the fast path encodes once and keeps).
func TestFastPathCapabilitiesOfTwoPrincipals(t *testing.T) {
	bin := testserver.Build(t)
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "up", Era: testserver.Modern}), testserver.Stateless())
	servers := []Server{{Name: "up", Target: up.URL}, {Name: "kid", Target: mcpadapter.Command{Path: bin}}}
	fast, fastURL := startForPrincipals(t, servers, &Options{}, "alice", "bob")
	_, slowURL := startForPrincipals(t, servers, &Options{slowPathOnly: true}, "alice", "bob")

	clients := []capsClient{
		{"alice", `{"elicitation":{"form":{}},"experimental":{"<a&b>":{"s":"\u2028x","n":1.5}}}`},
		{"bob", `{"roots":{"listChanged":true},"sampling":{"tools":{}}}`},
		{"alice", `{}`},
		{"bob", ` { "elicitation" : { "form" : { } } , "experimental" : {"<a&b>":{"s":"\u2028x","n":1.5}} } `},
		{"bob", `{"roots":{},"elicitation":{"url":{}},"extensions":{"io.x/y":{"k":"bob's"}}}`},
	}
	tools := []string{"up_whoami", "kid_whoami"}

	// What the server of each tool gets from each client, sent one at a
	// time without the fast path.
	want := map[string]fastAnswer{}
	for i, cl := range clients {
		for _, tool := range tools {
			c := capsCall(cl, 1, tool)
			r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(c.body))
			for k, v := range fastHeaders(tool) {
				r.Header.Set(k, v)
			}
			if f := fast.fastRequestOf(r); f == nil || f.call == nil {
				t.Fatalf("%s: not a direct call on the fast path", c.name)
			}
			a := sendCase(t, slowURL, c)
			if !strings.Contains(a.Raw, `clientCapabilities`) || !strings.Contains(a.Raw, `"structuredContent"`) {
				t.Fatalf("%s: the server got no capabilities: %s", c.name, a.Raw)
			}
			want[fmt.Sprint(i, tool)] = a
		}
	}

	const rounds = 12
	ctx := testCtx(t, 60*time.Second)
	var wg sync.WaitGroup
	errs := make(chan string, len(clients)*rounds*len(tools))
	for i, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range rounds {
				tool := tools[(n+i)%len(tools)]
				got, err := trySendCase(ctx, fastURL, capsCall(cl, 1, tool))
				if err != nil {
					errs <- fmt.Sprintf("client %d calling %s: %v", i, tool, err)
					return
				}
				if w := want[fmt.Sprint(i, tool)]; !reflect.DeepEqual(got, w) {
					errs <- fmt.Sprintf("client %d (%s) calling %s, round %d: got\n%s\nwant\n%s", i, cl.principal, tool, n, dump(got), dump(w))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// trySendCase sends c to url as sendCase does, in any goroutine.
func trySendCase(ctx context.Context, url string, c fastCase) (fastAnswer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(c.body))
	if err != nil {
		return fastAnswer{}, err
	}
	for k, v := range fastHeaders("up_echo") {
		req.Header.Set(k, v)
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fastAnswer{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return answerOf(resp.StatusCode, resp.Header, body), err
}

// TestCapsForwardComparator: the comparison above tells two clients'
// capabilities apart as their servers get them.
func TestCapsForwardComparator(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "up", Era: testserver.Modern}), testserver.Stateless())
	_, url := startForPrincipals(t, []Server{{Name: "up", Target: up.URL}, {Name: "up2", Target: up.URL}}, &Options{}, "alice", "bob")
	a := sendCase(t, url, capsCall(capsClient{"alice", `{"elicitation":{}}`}, 1, "up_whoami"))
	b := sendCase(t, url, capsCall(capsClient{"alice", `{"sampling":{}}`}, 1, "up_whoami"))
	if !strings.Contains(a.Raw, `"elicitation"`) || reflect.DeepEqual(a, b) {
		raw, _ := json.Marshal(a)
		t.Fatalf("two clients' capabilities answered alike: %s", raw)
	}
}

// metaRecorder passes requests on to target and records the _meta of each
// tools/call, as the bytes the gateway wrote.
func metaRecorder(t *testing.T, target string) (string, func() []string) {
	u, _ := url.Parse(target)
	rp := httputil.NewSingleHostReverseProxy(u)
	var mu sync.Mutex
	var metas []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Meta json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
			mu.Lock()
			metas = append(metas, string(msg.Params.Meta))
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + u.Path, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), metas...)
	}
}

// TestFastPathCapabilitiesBytes: the _meta a server gets with a call made
// on the fast path is, byte for byte, the one it gets from the gateway
// without the fast path, for capabilities with HTML characters, line
// separators and numbers, sent once and again.
func TestFastPathCapabilitiesBytes(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "up", Era: testserver.Modern}), testserver.Stateless())
	var got [2][]string
	for side, slowOnly := range []bool{false, true} {
		target, metas := metaRecorder(t, up.URL)
		_, u := startForPrincipals(t, []Server{{Name: "up", Target: target}, {Name: "other", Target: up.URL}}, &Options{slowPathOnly: slowOnly}, "alice", "bob")
		for _, cl := range []capsClient{
			{"alice", `{"experimental":{"<a>&\u2028":{"s":"</script>\u2029&\u00e9","n":[1.5,-0,1e2,12345678901234567890]}},"roots":{"listChanged":true}}`},
			{"bob", `{"elicitation":{"form":{}},"extensions":{"io.x/<y>":{"k":"\ud800"}}}`},
			{"alice", `{"experimental":{"<a>&\u2028":{"s":"</script>\u2029&\u00e9","n":[1.5,-0,1e2,12345678901234567890]}},"roots":{"listChanged":true}}`},
		} {
			if a := sendCase(t, u, capsCall(cl, 1, "up_whoami")); !strings.Contains(a.Raw, `"structuredContent"`) {
				t.Fatalf("%s: %s", cl.caps, a.Raw)
			}
		}
		got[side] = metas()
	}
	if len(got[0]) != 3 || !reflect.DeepEqual(got[0], got[1]) {
		t.Fatalf("servers got the _meta\n%q\non the fast path, and\n%q\nwithout it", got[0], got[1])
	}
	if !strings.Contains(got[0][0], "<a>") && !strings.Contains(got[0][0], `\u003ca\u003e`) {
		t.Fatalf("no capabilities sent on: %s", got[0][0])
	}
}

package replicatest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestSharedSessionEndedElsewhereRedis: with sessions in Redis, a
// client's call runs on replica B when it DELETEs its session on replica
// A: the call on B ends (its POST answered, not as done), the server is
// told the call is cancelled, and the client's next request on B is
// refused 404; with the store's notices (B reads the record when A's
// notice comes) and without them (B's poll reads it), in the same run.
// How long after the DELETE the call's POST ended is logged.
func TestSharedSessionEndedElsewhereRedis(t *testing.T) {
	store, _ := sessionStores(t)["redis"]()
	for _, mode := range []string{"notices", "polling"} {
		t.Run(mode, func(t *testing.T) {
			s := store
			if mode == "polling" {
				s = noNotices{store}
			}
			srv, st := testserver.NewWithState(testserver.Options{Name: "old", Era: testserver.Legacy})
			up := testserver.StartStreamable(t, srv)
			var urls []string
			for range 2 {
				g, err := gateway.New([]gateway.Server{{Name: "s", Target: up.URL}}, &gateway.Options{Logger: quietLimitLogger(), Sessions: &gateway.SessionOptions{Store: s}})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = g.Close() })
				if err := g.Start(limitCtx(t, 30*time.Second)); err != nil {
					t.Fatal(err)
				}
				ts := httptest.NewServer(g)
				t.Cleanup(ts.Close)
				urls = append(urls, ts.URL+"/mcp")
			}
			send := func(url, method, id, body string) *http.Response {
				req, _ := http.NewRequestWithContext(limitCtx(t, 90*time.Second), method, url, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				if id != "" {
					req.Header.Set("Mcp-Session-Id", id)
					req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				return resp
			}
			drain := func(resp *http.Response) int {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return resp.StatusCode
			}
			resp := send(urls[0], http.MethodPost, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
			id := resp.Header.Get("Mcp-Session-Id")
			if drain(resp) != http.StatusOK || id == "" {
				t.Fatalf("initialize on A: %s", resp.Status)
			}
			drain(send(urls[0], http.MethodPost, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
			ended := make(chan string, 1)
			go func() {
				resp, err := http.DefaultClient.Do(func() *http.Request {
					req, _ := http.NewRequestWithContext(limitCtx(t, 90*time.Second), http.MethodPost, urls[1], strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"ms":60000}}}`))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					req.Header.Set("Mcp-Session-Id", id)
					req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
					return req
				}())
				if err != nil {
					ended <- err.Error()
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				ended <- string(b)
			}()
			if err := st.Wait(limitCtx(t, 15*time.Second), func(s *testserver.State) bool { return s.Calls("slow") == 1 }); err != nil {
				t.Fatalf("the call never reached the server: %v", err)
			}
			start := time.Now()
			if code := drain(send(urls[0], http.MethodDelete, id, "")); code != http.StatusNoContent {
				t.Fatalf("DELETE on A: %d", code)
			}
			select {
			case b := <-ended:
				t.Logf("%s: the call's POST on B ended %s after the DELETE on A", mode, time.Since(start).Round(100*time.Microsecond))
				if strings.Contains(b, "slept") {
					t.Errorf("the call on B was answered as done: %q", b)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the call's POST on B did not end within 30s of the DELETE on A")
			}
			if err := st.Wait(limitCtx(t, 15*time.Second), func(s *testserver.State) bool { return s.Cancellations() == 1 }); err != nil {
				t.Errorf("the server saw %d cancellations: %v", st.Cancellations(), err)
			}
			if code := drain(send(urls[1], http.MethodPost, id, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)); code != http.StatusNotFound {
				t.Errorf("a ping on B once the session was deleted: %d, want 404", code)
			}
		})
	}
}

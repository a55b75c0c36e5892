package gateway

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestParkedCallBelongsToItsPrincipal: the request state of a call parked
// for alice (a handshake-era server asked her a question) is refused when
// bob sends it back with an answer; alice's answer completes the call.
func TestParkedCallBelongsToItsPrincipal(t *testing.T) {
	srv := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	_, url := startForPrincipals(t, []Server{{Name: "s", Target: srv.URL}}, &Options{Logger: quietLogger(t)}, "alice", "bob")
	client := func(token string) *mcp.ClientSession {
		hc := &http.Client{Transport: bearer{token}}
		c := mcp.NewClient(&mcp.Implementation{Name: token}, &mcp.ClientOptions{
			MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil },
		})
		cs, err := c.Connect(testCtx(t, 20*time.Second), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: v0728})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	alice, bob := client("alice"), client("bob")
	ctx := testCtx(t, 30*time.Second)
	res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "book", Arguments: map[string]any{"date": "sunday"}})
	if err != nil || !res.NeedsInput() || !strings.HasPrefix(res.RequestState, statePrefix) || len(res.InputRequests) != 1 {
		t.Fatalf("alice's first round: %+v, %v", res, err)
	}
	answers := mcp.InputResponseMap{}
	for id := range res.InputRequests {
		answers[id] = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"guests": 9}}
	}
	_, err = bob.CallTool(ctx, &mcp.CallToolParams{Name: "book", Arguments: map[string]any{"date": "sunday"}, RequestState: res.RequestState, InputResponses: answers})
	if err == nil || !strings.Contains(err.Error(), "names no call waiting") {
		t.Fatalf("bob answering alice's question: %v", err)
	}
	got, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "book", Arguments: map[string]any{"date": "sunday"}, RequestState: res.RequestState, InputResponses: answers})
	if err != nil || !strings.HasPrefix(texts(got), "Booked 9 guests") {
		t.Fatalf("alice's answer: %q, %v", texts(got), err)
	}
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

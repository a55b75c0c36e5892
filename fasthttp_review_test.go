package mcpadapter_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
)

// A call handed over to go-sdk by the fast path (here: an answer over
// 1 MiB) must reach its result when the server writes the answer's id
// after its result, as the TypeScript SDK does ({"result":…,"jsonrpc":
// "2.0","id":N}): the fast path's id must be found and replaced by
// go-sdk's wherever it stands in the message.
func TestHTTPFastPathHandOffIDAfterResult(t *testing.T) {
	t.Parallel()
	url := testenv.StartEverythingHTTP(t, testenv.TransportStreamable)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rec := &callIDRecorder{base: http.DefaultTransport.(*http.Transport).Clone()}
	c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{
		Logger: quietLogger(), HTTPClient: &http.Client{Transport: rec}, MaxMessageBytes: 8 << 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	for _, n := range []int{100 << 10, 1200 << 10} {
		msg := strings.Repeat("x", n)
		args, _ := json.Marshal(map[string]string{"message": msg})
		cctx, ccancel := context.WithTimeout(ctx, 20*time.Second)
		res, err := c.CallTool(cctx, "echo", json.RawMessage(args), nil)
		ccancel()
		if err != nil {
			t.Fatalf("echo of %d bytes: %v", n, err)
		}
		if got := res.Text(); !strings.Contains(got, msg) {
			t.Errorf("echo of %d bytes: got %d bytes of text", n, len(got))
		}
		if id := rec.last(); fastID(id) != mcpadapter.FastPathBuilt {
			t.Errorf("echo of %d bytes: sent with id %s; fast path built: %v", n, id, mcpadapter.FastPathBuilt)
		}
	}
}

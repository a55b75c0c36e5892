package mcpadapter_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestEndedContextStartsNoConnection: a request whose context has ended
// makes no connection. (A gateway's supervisor asking for a session with
// its ended context just after the Client was closed had a connection
// made that nobody closed: its event stream kept the server open.)
func TestEndedContextStartsNoConnection(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	hs := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	c, err := mcpadapter.NewClient(hs.URL, &mcpadapter.ClientOptions{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	echoOK(t, ctx, c, "before")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	before := len(hs.Requests())
	ended, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Connect(ended); err == nil {
		t.Error("Connect with an ended context succeeded")
	}
	if _, err := c.ListTools(ended); err == nil {
		t.Error("ListTools with an ended context succeeded")
	}
	time.Sleep(300 * time.Millisecond) // a connect started anyway would have reached the server
	if got := hs.Requests()[before:]; len(got) != 0 {
		t.Errorf("requests with an ended context reached the server: %+v", got)
	}
}

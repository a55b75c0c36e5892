package mcpadapter_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestNameFromServerResumeFresh: a 2026-07-28 question asked through a
// NameFromServer client is saved (PendingCall as JSON, with the server's
// own name) and resumed by a fresh client of the same command in
// another run, before that client made any connection: the resume
// reaches the server and completes the booking, and is not refused as
// a call of another server because the fresh client's name was not yet
// known.
func TestNameFromServerResumeFresh(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, count := countedServer(t, "weather.example/Server", testserver.Modern)
	interrupting := func() *mcpadapter.Client {
		c, err := mcpadapter.NewClient(cmd, &mcpadapter.ClientOptions{NameFromServer: true})
		if err != nil {
			t.Fatal(err)
		}
		a, err := mcpadapter.New(c, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		return a.Client()
	}
	first := interrupting()
	res, err := first.CallTool(ctx, "book", json.RawMessage(`{"date":"2026-12-24"}`), nil)
	p := mustInterrupt(t, res, err)
	if p.Server != "weather_example_Server" {
		t.Fatalf("the pending call names server %q", p.Server)
	}
	saved, _ := json.Marshal(p)
	var restored mcpadapter.PendingCall
	if err := json.Unmarshal(saved, &restored); err != nil {
		t.Fatal(err)
	}
	fresh := interrupting()
	// Another user of the fresh client connects at the same time.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = fresh.Connect(ctx)
	}()
	res, err = fresh.Resume(ctx, &restored, answer(restored.Requests[0].Key, elicitation.Accept, map[string]any{"guests": 2, "seating": "terrace"}))
	wg.Wait()
	if err != nil || res.IsError || !strings.HasPrefix(res.Text(), "Booked 2 guests") {
		t.Fatalf("the fresh client's resume: %v %+v", err, res)
	}
	if got := fresh.Name(); got != "weather_example_Server" {
		t.Errorf("the fresh client is named %q", got)
	}
	if n := starts(t, count); n != 2 {
		t.Errorf("the server started %d times, want 2 (one per client)", n)
	}
}

// TestNameFromServerResumeTaskFresh: ResumeTask on a NameFromServer
// client that has not connected yet, with the handle of a task of the
// server it reaches (Server: the server's own name), asks the server
// about the task; it is not refused as a task of another server.
func TestNameFromServerResumeTaskFresh(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, count := countedServer(t, "weather.example/Server", testserver.Modern)
	c := nameFromServerClient(t, cmd)
	_, err := c.ResumeTask(ctx, mcpadapter.TaskHandle{Server: "weather_example_Server", Tool: "book", TaskID: "t-1"}, nil)
	if err == nil {
		t.Fatal("a task the server does not know resumed")
	}
	if strings.Contains(err.Error(), "this client reaches") {
		t.Fatalf("refused without asking the server: %v", err)
	}
	if n := starts(t, count); n != 1 {
		t.Errorf("the server started %d times, want 1", n)
	}
	if got := c.Name(); got != "weather_example_Server" {
		t.Errorf("the client is named %q", got)
	}
}

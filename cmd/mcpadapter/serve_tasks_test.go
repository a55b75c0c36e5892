package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/spf13/pflag"
)

// TestServeTaskFlags: --max-tasks-per-principal, --task-ttl and
// --task-poll-interval reach the gateway: a 2025-11-25 client's task
// advises the poll interval and keeps the ttl, and a second task while the
// first runs is refused with CodeTooManyTasks. Negative values are usage
// errors.
func TestServeTaskFlags(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "alpha"}))
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"mcpServers": {"alpha": {"url": %q}}}`, up.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, dir, nil, "--config", cfg, "--listen", "127.0.0.1:0",
		"--max-tasks-per-principal", "1", "--task-ttl", "90s", "--task-poll-interval", "75ms")
	var session string
	post := func(body string) rpcAnswer {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, s.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			session = id
		}
		return readAnswer(t, resp.Body)
	}
	post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"ms":10000},"task":{"ttl":120000}}}`
	first := post(call)
	var made struct {
		Task struct {
			TaskID       string `json:"taskId"`
			TTL          int64  `json:"ttl"`
			PollInterval int64  `json:"pollInterval"`
		} `json:"task"`
	}
	if first.Error != nil || json.Unmarshal(first.Result, &made) != nil || made.Task.TaskID == "" {
		t.Fatalf("first task: %s %+v", first.Result, first.Error)
	}
	if made.Task.PollInterval != 75 || made.Task.TTL != 90000 {
		t.Errorf("task advises pollInterval %d ms and ttl %d ms; want 75 and 90000 (the flags)", made.Task.PollInterval, made.Task.TTL)
	}
	second := post(call)
	if second.Error == nil || second.Error.Code != gateway.CodeTooManyTasks {
		t.Fatalf("second task while the first runs: %s %+v; want code %d", second.Result, second.Error, gateway.CodeTooManyTasks)
	}
	post(`{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":"` + made.Task.TaskID + `"}}`)

	for _, bad := range [][]string{{"--max-tasks-per-principal", "-1"}, {"--task-ttl", "-1s"}, {"--task-poll-interval", "-5ms"}} {
		r := cliIn(t, dir, "", append([]string{"serve", "--config", cfg, "--listen", "127.0.0.1:0"}, bad...)...)
		r.Must(t, 2, nil, []string{bad[0] + ": "})
	}
}

type rpcAnswer struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// readAnswer reads the JSON-RPC answer of a POST, as JSON or in an event
// stream (its first message with a result or an error).
func readAnswer(t *testing.T, body io.Reader) rpcAnswer {
	t.Helper()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimPrefix(sc.Text(), "data: ")
		var a rpcAnswer
		if json.Unmarshal([]byte(line), &a) == nil && (a.Result != nil || a.Error != nil) {
			return a
		}
	}
	return rpcAnswer{}
}

// TestServeTaskFlagsAlone: each of --max-tasks-per-principal, --task-ttl
// and --task-poll-interval, set alone, reaches gateway.TaskOptions (the
// others left to the gateway's defaults); none set is no TaskOptions.
func TestServeTaskFlagsAlone(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want *gateway.TaskOptions
	}{
		{nil, nil},
		{[]string{"--max-tasks-per-principal", "3"}, &gateway.TaskOptions{MaxPerPrincipal: 3}},
		{[]string{"--task-ttl", "90s"}, &gateway.TaskOptions{TTL: 90 * time.Second}},
		{[]string{"--task-poll-interval", "75ms"}, &gateway.TaskOptions{PollInterval: 75 * time.Millisecond}},
	} {
		var f serveTaskFlags
		fl := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		f.add(fl)
		if err := fl.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		got, err := f.options()
		if err != nil || (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
			t.Errorf("%v: %+v, %v; want %+v", tt.args, got, err, tt.want)
		}
	}
}

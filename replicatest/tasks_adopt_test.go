package replicatest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/internal/taskserver"
	"github.com/mcpadapter/mcpadapter/pgstore"
	"github.com/mcpadapter/mcpadapter/redisstore"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"
)

// TestTasksAdoptedOnceRolling: four gateway replicas share their tasks in
// Redis (and again in PostgreSQL), each reaching a 2026-07-28 server with
// Tasks through a front of its own that counts its tasks/get. A client's
// server task of 6 s runs on replica A, which shuts down; then eight
// tasks/get at once, four to B and four to C, race to adopt it: one
// replica wins and follows it, the other polls the server about it not
// once. The winner shuts down in turn, and replica D follows the task to
// its result. The server ran it once and saw no tasks/cancel.
func TestTasksAdoptedOnceRolling(t *testing.T) {
	for _, store := range []string{"redis", "postgres"} {
		t.Run(store, func(t *testing.T) { adoptedOnce(t, store) })
	}
}

func adoptedOnce(t *testing.T, kind string) {
	ctx := serveCtx(t, 2*time.Minute)
	db := startDB(t, kind)
	srv := taskserver.New(taskserver.Options{PollInterval: 20})
	t.Cleanup(srv.Close)
	ext := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ext.Close)
	target, _ := url.Parse(ext.URL)
	const n = 4
	var gets [n]atomic.Int64
	var gws [n]*gateway.Gateway
	var urls [n]string
	for i := range n {
		proxy := httputil.NewSingleHostReverseProxy(target)
		front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if bytes.Contains(body, []byte(`"tasks/get"`)) {
				gets[i].Add(1)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			proxy.ServeHTTP(w, r)
		}))
		t.Cleanup(front.Close)
		g, err := gateway.New([]gateway.Server{{Name: "ext", Target: front.URL}}, &gateway.Options{Prefix: mcpadapter.PrefixAlways,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Tasks: &gateway.TaskOptions{Store: taskStore(t, ctx, kind, db.URL)}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = g.Close() })
		if err := g.Start(ctx); err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(g)
		t.Cleanup(hs.Close)
		gws[i], urls[i] = g, hs.URL+"/mcp"
	}
	tr := sharedTransport()
	t.Cleanup(tr.CloseIdleConnections)
	rpc := func(i int) *taskRPC { return &taskRPC{ctx: ctx, url: urls[i], tr: tr, modern: true} }
	res, code, msg := rpc(0).do("tools/call", `{"name":"ext_work","arguments":{"steps":60,"stepMs":100},"task":{"ttl":120000}}`)
	var made struct {
		TaskID string `json:"taskId"`
	}
	if code != 0 || json.Unmarshal(res, &made) != nil || made.TaskID == "" {
		t.Fatalf("tools/call on A: %s %d %s", res, code, msg)
	}
	id := made.TaskID
	time.Sleep(300 * time.Millisecond)
	shutdown := func(i int) {
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_ = gws[i].Shutdown(sctx)
	}
	shutdown(0)
	var wg sync.WaitGroup
	for k := range 8 {
		wg.Go(func() {
			res, code, msg := rpc(1+k%2).do("tasks/get", `{"taskId":"`+id+`"}`)
			if code != 0 || !strings.Contains(string(res), `"working"`) {
				t.Errorf("tasks/get racing for the task on replica %d: %s %d %s", 1+k%2, res, code, msg)
			}
		})
	}
	wg.Wait()
	time.Sleep(500 * time.Millisecond)
	b0, c0 := gets[1].Load(), gets[2].Load()
	time.Sleep(time.Second)
	b, c := gets[1].Load()-b0, gets[2].Load()-c0
	t.Logf("in 1 s after the race: B polled the server %d times, C %d", b, c)
	if (b == 0) == (c == 0) {
		t.Fatalf("in 1 s after the race, B polled the server %d times and C %d: want one replica following the task", b, c)
	}
	winner := 1
	if c > 0 {
		winner = 2
	}
	shutdown(winner)
	w0 := gets[winner].Load()
	rpc(3).waitStatus(t, id, "completed", 30*time.Second)
	if w := gets[winner].Load() - w0; w != 0 {
		t.Errorf("replica %d polled the server %d times after it shut down", winner, w)
	}
	res, _, _ = rpc(3).do("tasks/get", `{"taskId":"`+id+`"}`)
	if !strings.Contains(string(res), "done: 60 steps") {
		t.Fatalf("the task's result on D: %s", res)
	}
	if s, k := srv.Started("work"), srv.Cancels(); s != 1 || k != 0 {
		t.Fatalf("the server started the task %d times and got %d tasks/cancel (want 1, 0)", s, k)
	}
}

// taskStore is one replica's TaskStore of kind at dbURL.
func taskStore(t *testing.T, ctx context.Context, kind, dbURL string) gateway.TaskStore {
	t.Helper()
	if kind == "redis" {
		opts, err := redis.ParseURL(dbURL)
		if err != nil {
			t.Fatal(err)
		}
		rdb := redis.NewClient(opts)
		t.Cleanup(func() { _ = rdb.Close() })
		return redisstore.NewTaskStore(rdb, nil)
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s, err := pgstore.NewTaskStore(ctx, pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

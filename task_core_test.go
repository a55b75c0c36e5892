package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/taskserver"
)

// coreServer serves a 2025-11-25 task server over streamable HTTP.
func coreServer(t *testing.T, interval int64) (*taskserver.Server, string) {
	srv := newTaskServer(t, taskserver.Options{Core: true, PollInterval: interval})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return srv, hs.URL
}

// TestCoreTaskModes: on a 2025-11-25 server the tool's taskSupport and the
// mode decide: an optional tool runs plain by default and as a task with
// TaskPrefer (the TTL asked is sent); a required one always runs as a
// task; a failed task (tasks/result answers an error) is an error result;
// a forgotten one a *TaskError; ListTasks reads every page.
func TestCoreTaskModes(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, url := coreServer(t, 20)
	c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{Tasks: &mcpadapter.TaskOptions{TTL: 90 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tools, err := c.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	support := map[string]string{}
	for _, tl := range tools {
		support[tl.Name] = tl.TaskSupport
	}
	if support["work"] != "optional" || support["fail"] != "required" || support["ask"] != "forbidden" {
		t.Fatalf("TaskSupport: %v", support)
	}
	res, err := c.CallTool(ctx, "work", json.RawMessage(`{"stepMs":10}`), nil)
	if err != nil || res.Text() != "plain call of work" || srv.Started("work") != 0 {
		t.Fatalf("optional tool, TaskAuto: %v %v, %d tasks", res, err, srv.Started("work"))
	}
	var h mcpadapter.TaskHandle
	res, err = c.CallTool(ctx, "work", json.RawMessage(`{"steps":2,"stepMs":30}`), &mcpadapter.CallOptions{
		Task: mcpadapter.TaskPrefer, OnTask: func(th mcpadapter.TaskHandle) { h = th }})
	if err != nil || res.Text() != "done: 2 steps" || srv.Started("work") != 1 || h.Protocol != mcpadapter.TaskProtocolCore {
		t.Fatalf("optional tool, TaskPrefer: %v %v, %d tasks, handle %+v", res, err, srv.Started("work"), h)
	}
	got, err := c.GetTask(ctx, h.TaskID)
	if err != nil || got.Status != mcpadapter.TaskCompleted || got.TTL == nil || *got.TTL != 90000 {
		t.Errorf("GetTask: %+v %v (want completed, ttl 90000 as asked)", got, err)
	}
	res, err = c.CallTool(ctx, "fail", json.RawMessage(`{"stepMs":10}`), nil)
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "disk on fire") {
		t.Errorf("failed task: %v %v", res, err)
	}
	_, err = c.CallTool(ctx, "forget", nil, nil)
	var te *mcpadapter.TaskError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "unknown task") {
		t.Errorf("forgotten task: %v", err)
	}
	for range 2 {
		if _, err := c.CallTool(ctx, "work", json.RawMessage(`{"stepMs":1}`), &mcpadapter.CallOptions{Task: mcpadapter.TaskPrefer}); err != nil {
			t.Fatal(err)
		}
	}
	listed, err := c.ListTasks(ctx) // two a page: 2 pages
	if err != nil || len(listed) != 4 {
		t.Errorf("ListTasks: %d tasks, %v; want 4 (3 work, 1 fail; the forgotten one is gone)", len(listed), err)
	}
}

// TestCoreTaskCancel: a 2025-11-25 task is cancelled on the server when
// the call's context ends; CancelTask returns the task as the server
// describes it.
func TestCoreTaskCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, url := coreServer(t, 20)
	c, err := mcpadapter.NewClient(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	callCtx, stop := context.WithCancel(ctx)
	var id string
	_, err = c.CallTool(callCtx, "work", json.RawMessage(`{"steps":100,"stepMs":100}`), &mcpadapter.CallOptions{
		Task: mcpadapter.TaskPrefer, OnTask: func(h mcpadapter.TaskHandle) { id = h.TaskID; stop() }})
	var tce *mcpadapter.TaskCancelledError
	if !errors.As(err, &tce) || !tce.Confirmed || srv.Status(id) != "cancelled" || srv.Running() != 0 {
		t.Fatalf("want a confirmed cancel, got %v (server: %q, %d running)", err, srv.Status(id), srv.Running())
	}
	// A 2025-11-25 server answers tasks/cancel with the task.
	if got, err := c.CancelTask(ctx, id); err != nil || got == nil || got.Status != mcpadapter.TaskCancelled {
		t.Errorf("CancelTask: %+v %v", got, err)
	}
}

package main

import (
	"time"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/cmdline"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/spf13/pflag"
)

// serveTaskFlags bound the tasks the gateway keeps (gateway.TaskOptions).
type serveTaskFlags struct {
	max  int
	ttl  time.Duration
	poll time.Duration
}

func (f *serveTaskFlags) add(fl *pflag.FlagSet) {
	fl.IntVar(&f.max, "max-tasks-per-principal", 0, "tasks one principal may have running or unfetched at once (default 64)")
	fl.DurationVar(&f.ttl, "task-ttl", 0, "how long a finished task's result is kept when nobody fetches it (default 10m)")
	fl.DurationVar(&f.poll, "task-poll-interval", 0, "the interval between polls advised to clients of a task (default 200ms)")
}

// options returns the TaskOptions the flags set, nil when none is set.
func (f *serveTaskFlags) options() (*gateway.TaskOptions, error) {
	switch {
	case f.max < 0:
		return nil, cmdline.Usagef("--max-tasks-per-principal: %d is negative", f.max)
	case f.ttl < 0:
		return nil, cmdline.Usagef("--task-ttl: %s is negative", f.ttl)
	case f.poll < 0:
		return nil, cmdline.Usagef("--task-poll-interval: %s is negative", f.poll)
	case f.max == 0 && f.ttl == 0 && f.poll == 0:
		return nil, nil
	}
	return &gateway.TaskOptions{MaxPerPrincipal: f.max, TTL: f.ttl, PollInterval: f.poll}, nil
}

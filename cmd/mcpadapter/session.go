package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpadapter/mcpadapter"
)

// session is the servers a command works with: usually one adapter (one
// server, or the group of a config); the demo uses one adapter per server
// so that each keeps its own protocol era.
type session struct {
	adapters []*mcpadapter.Adapter
	// prefix names tools "server_tool" across several adapters.
	prefix bool
	// source says where the servers came from, for messages.
	source string
	close  func()
}

func single(ad *mcpadapter.Adapter, source string) *session {
	return &session{adapters: []*mcpadapter.Adapter{ad}, source: source}
}

// Close ends every connection.
func (s *session) Close() {
	for _, ad := range s.adapters {
		_ = ad.Close()
	}
	if s.close != nil {
		s.close()
	}
}

// Tools lists the tools of every adapter.
func (s *session) Tools(ctx context.Context) ([]*mcpadapter.Tool, error) {
	var all []*mcpadapter.Tool
	seen := map[string]string{}
	for _, ad := range s.adapters {
		tools, err := ad.Tools(ctx)
		if err != nil {
			return nil, err
		}
		for _, t := range tools {
			if s.prefix {
				t.Name = t.Server + "_" + t.Name
			}
			if other, dup := seen[t.Name]; dup {
				return nil, &mcpadapter.NameCollisionError{Name: t.Name, First: other, Second: t.Server + "/" + t.OriginalName}
			}
			seen[t.Name] = t.Server + "/" + t.OriginalName
			all = append(all, t)
		}
	}
	return all, nil
}

// Info describes every connection; the era is the oldest.
func (s *session) Info(ctx context.Context) (*mcpadapter.Info, error) {
	out := &mcpadapter.Info{}
	var errs []error
	for _, ad := range s.adapters {
		info, err := ad.Info(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if out.Era == mcpadapter.EraUnknown || info.Era < out.Era {
			out.Era = info.Era
		}
		if info.PulledDownBy != "" {
			out.PulledDownBy = info.PulledDownBy
		}
		out.Servers = append(out.Servers, info.Servers...)
		out.Unavailable = append(out.Unavailable, info.Unavailable...)
	}
	if len(out.Servers) == 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// Client returns the client of the named server.
func (s *session) Client(name string) (*mcpadapter.Client, error) {
	for _, ad := range s.adapters {
		if c := ad.Group().Client(name); c != nil {
			return c, nil
		}
	}
	return nil, fmt.Errorf("no server %q", name)
}

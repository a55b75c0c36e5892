// Package session holds the servers one mcpadapter command works with:
// usually one adapter (one server, or the group of a config); the demo uses
// one adapter per server so that each keeps its own protocol era.
package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpadapter/mcpadapter"
)

// Session is the adapters a command lists, calls and inspects.
type Session struct {
	adapters []*mcpadapter.Adapter
	// prefix names tools "server_tool" across several adapters.
	prefix bool
	// source says where the servers came from, for messages.
	source string
	stop   func()
}

// Single is a session over one adapter; source says where its servers came
// from ("config .mcp.json", a server name).
func Single(ad *mcpadapter.Adapter, source string) *Session {
	return &Session{adapters: []*mcpadapter.Adapter{ad}, source: source}
}

// Prefixed is an empty session whose adapters' tools are named
// "server_tool"; stop, if not nil, runs after Close has closed them.
func Prefixed(source string, stop func()) *Session {
	return &Session{prefix: true, source: source, stop: stop}
}

// Add adds an adapter to the session.
func (s *Session) Add(ad *mcpadapter.Adapter) {
	s.adapters = append(s.adapters, ad)
}

// Source says where the session's servers came from, for messages.
func (s *Session) Source() string { return s.source }

// Close ends every connection.
func (s *Session) Close() {
	for _, ad := range s.adapters {
		_ = ad.Close()
	}
	if s.stop != nil {
		s.stop()
	}
}

// Tools lists the tools of every adapter.
func (s *Session) Tools(ctx context.Context) ([]*mcpadapter.Tool, error) {
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

// Info describes a session's connections.
type Info struct {
	// Servers are the servers connected, each with the era it negotiated.
	Servers []mcpadapter.ServerInfo
	// Unavailable are the servers that could not be connected.
	Unavailable []mcpadapter.ServerFailure
	// Groups are the adapters of several servers, each speaking one era;
	// servers outside a group (the demo's) negotiate their eras apart.
	Groups []Group
	// Separate reports that the session has several adapters, each
	// negotiating its own era.
	Separate bool
}

// Group is an adapter of several servers: one protocol era for all.
type Group struct {
	// Servers names the group's servers, in order.
	Servers []string
	// Era is the group's era, that of its oldest server.
	Era mcpadapter.Era
	// PulledDownBy names the handshake-era server that pulled the group
	// down from 2026-07-28, if one did.
	PulledDownBy string
}

// Info describes every connection.
func (s *Session) Info(ctx context.Context) (*Info, error) {
	out := &Info{Separate: len(s.adapters) > 1}
	var errs []error
	for _, ad := range s.adapters {
		info, err := ad.Info(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if clients := ad.Group().Clients(); len(clients) > 1 {
			g := Group{Era: info.Era, PulledDownBy: info.PulledDownBy}
			for _, c := range clients {
				g.Servers = append(g.Servers, c.Name())
			}
			out.Groups = append(out.Groups, g)
		}
		out.Servers = append(out.Servers, info.Servers...)
		out.Unavailable = append(out.Unavailable, info.Unavailable...)
	}
	if len(out.Servers) == 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// Adapters returns the session's adapters, in order.
func (s *Session) Adapters() []*mcpadapter.Adapter {
	return append([]*mcpadapter.Adapter(nil), s.adapters...)
}

// Client returns the client of the named server.
func (s *Session) Client(name string) (*mcpadapter.Client, error) {
	for _, ad := range s.adapters {
		if c := ad.Group().Client(name); c != nil {
			return c, nil
		}
	}
	return nil, fmt.Errorf("no server %q", name)
}

// Clients returns the clients of every server, in order.
func (s *Session) Clients() []*mcpadapter.Client {
	var out []*mcpadapter.Client
	for _, ad := range s.adapters {
		out = append(out, ad.Group().Clients()...)
	}
	return out
}

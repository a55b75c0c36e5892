//go:build !linux

package gateway

import (
	"errors"
	"net"
	"time"
)

// connPoller is Linux's (idlepoll_linux.go); elsewhere each parked
// connection waits with a goroutine of its own.
type connPoller struct{}

func newConnPoller() (*connPoller, error) {
	return nil, errors.New("no poller of connections on this system")
}

func (p *connPoller) add(net.Conn, time.Time, func()) (uint64, bool) { return 0, false }

func (p *connPoller) remove(uint64) {}

func (p *connPoller) close() {}

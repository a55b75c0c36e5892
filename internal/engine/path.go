package engine

import "sync/atomic"

// A Path is the way one tools/call went (Session.CallTool).
type Path uint8

// The paths.
const (
	// PathSDK: go-sdk's request machinery made the call.
	PathSDK Path = iota
	// PathFast: the fast path sent the call and read its answer.
	PathFast
	// PathHandedOver: the fast path sent the call and handed its answer
	// over to go-sdk, which finished it.
	PathHandedOver
	numPaths
)

// String names p.
func (p Path) String() string {
	switch p {
	case PathSDK:
		return "go-sdk"
	case PathFast:
		return "fast"
	case PathHandedOver:
		return "fast, handed over"
	}
	return "unknown"
}

// Paths counts the tools/calls an engine made, by the path each took
// (indexed by Path). Each attempt counts: a call sent again on a new
// connection counts twice.
type Paths [numPaths]int64

// pathCounts is the record Paths reads: one atomic add per call, which
// the differential tests read to assert the path each side took.
type pathCounts [numPaths]atomic.Int64

func (c *pathCounts) add(p Path) { c[p].Add(1) }

// handOver moves a call counted on the fast path to the calls handed over.
func (c *pathCounts) handOver() {
	c[PathFast].Add(-1)
	c[PathHandedOver].Add(1)
}

// Paths returns how many tools/calls took each path so far.
func (e *Engine) Paths() Paths {
	var out Paths
	for i := range e.paths {
		out[i] = e.paths[i].Load()
	}
	return out
}

// Sub returns p minus q: the calls made between two readings.
func (p Paths) Sub(q Paths) Paths {
	for i := range p {
		p[i] -= q[i]
	}
	return p
}

package mcpadapter

import "github.com/mcpadapter/mcpadapter/internal/engine"

// FastPathBuilt tells the external tests whether this build has the fast
// path (not built with -tags mcpadapter_nofastpath).
const FastPathBuilt = engine.FastPathBuilt

// CallPaths returns how many tools/calls c made on each path so far
// (engine.Paths, indexed by engine.Path).
func CallPaths(c *Client) engine.Paths { return c.eng.Paths() }

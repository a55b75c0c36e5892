//go:build mcpadapter_nofastpath

package engine

// fastPathOff: built with -tags mcpadapter_nofastpath, every call takes
// go-sdk's path. See call.go.
const fastPathOff = true

// FastPathBuilt says whether this build has the fast path.
const FastPathBuilt = !fastPathOff

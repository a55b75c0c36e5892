//go:build !mcpadapter_nofastpath

package engine

// fastPathOff turns the fast path off for every connection of the build:
// build with -tags mcpadapter_nofastpath to run everything on go-sdk's
// path (the tests do, to prove the two behave the same). See call.go.
const fastPathOff = false

// FastPathBuilt says whether this build has the fast path.
const FastPathBuilt = !fastPathOff

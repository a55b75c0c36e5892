//go:build !mcpadapter_nofastpath

package mcpadapter

// fastPathOff turns the fast path off for every client of the build: build
// with -tags mcpadapter_nofastpath to run everything on go-sdk's path (the
// tests do, to prove the two behave the same). See fastcall.go.
const fastPathOff = false

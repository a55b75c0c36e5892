//go:build mcpadapter_nofastpath

package mcpadapter

// fastPathOff: built with -tags mcpadapter_nofastpath, every call takes
// go-sdk's path. See fastcall.go.
const fastPathOff = true

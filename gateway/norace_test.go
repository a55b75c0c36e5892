//go:build !race

package gateway

// raceDetector reports a test binary built with -race.
const raceDetector = false

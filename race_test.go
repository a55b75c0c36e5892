//go:build race

package mcpadapter_test

// raceDetector reports a test binary built with -race.
const raceDetector = true

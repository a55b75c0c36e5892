//go:build !linux

package stdio

import "time"

// strays: only Linux tells a server's descendants that left its process
// group (see strays_linux.go); elsewhere the group kill is all there is.
type strays struct{}

func newStrays(int) *strays { return &strays{} }

func (*strays) note() {}

func (*strays) kill(time.Duration) {}

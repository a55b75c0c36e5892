//go:build !unix

package gateway

import "time"

// processCPU is the CPU time the process has used: not measured here.
func processCPU() time.Duration { return 0 }

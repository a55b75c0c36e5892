//go:build !unix

package stdio

import (
	"os/exec"
	"time"
)

// watcher is not available here: a server's children may outlive this
// process.
type watcher struct{}

func startWatcher(int) (*watcher, error) { return nil, nil }

func (*watcher) stop() {}

func waitGroupGone(*exec.Cmd, time.Duration) bool { return true }

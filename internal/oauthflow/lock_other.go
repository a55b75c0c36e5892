//go:build !unix

package oauthflow

import "context"

// lockFile is a no-op where flock is missing: stores in one process are
// still serialised by their mutex.
func lockFile(context.Context, string) (unlock func(), err error) { return func() {}, nil }

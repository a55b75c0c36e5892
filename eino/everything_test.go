package eino_test

import (
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
)

// everything returns server-everything over stdio.
func everything(t *testing.T) mcpadapter.Command {
	path, args, env := testenv.EverythingStdio(t)
	return mcpadapter.Command{Path: path, Args: args, Env: env}
}

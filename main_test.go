package mcpadapter_test

import (
	"log/slog"
	"os"
	"testing"
)

// TestMain keeps passing tests quiet: a client without a Logger logs to
// slog.Default, which here discards (tests that check logs give their
// client its own Logger).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == envServerArg {
		os.Exit(envServer()) // the stdio server of TestStdioSafeEnvironment
	}
	if url := os.Getenv(taskChildEnv); url != "" {
		os.Exit(taskChild(url)) // a host process of TestTaskSurvivesHostKill
	}
	slog.SetDefault(slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}

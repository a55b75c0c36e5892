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
	if url := os.Getenv(taskChildEnv); url != "" {
		os.Exit(taskChild(url)) // a host process of TestTaskSurvivesHostKill
	}
	slog.SetDefault(slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}

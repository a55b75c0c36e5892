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
	slog.SetDefault(slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}

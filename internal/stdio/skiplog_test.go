package stdio

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestLogSkip(t *testing.T) {
	var buf bytes.Buffer
	log := LogSkip(slog.New(slog.NewTextHandler(&buf, nil)))
	log(Skip{Line: "hello"})
	log(Skip{Line: `{"id":1`, Err: errors.New("truncated")})
	log(Skip{Line: "last", Suppressed: 42})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d records, want 3:\n%s", len(lines), buf.String())
	}
	for i, want := range []string{"non-JSON line to stdout", "could not be decoded; its call fails", "skipped=42 last=last"} {
		if !strings.Contains(lines[i], want) || !strings.Contains(lines[i], "level=WARN") {
			t.Errorf("record %d = %q, want a warning with %q", i, lines[i], want)
		}
	}
}

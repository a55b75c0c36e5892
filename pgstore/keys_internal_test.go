package pgstore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestFitKeyNeverShort: a long key is stored as more than maxKey bytes
// whatever its bytes (a key of UTF-8 continuation bytes included, which a
// SQL_ASCII database takes), so it can never equal a short key that
// another caller stores as it is.
func TestFitKeyNeverShort(t *testing.T) {
	for _, k := range []string{
		strings.Repeat("a", 5000),
		strings.Repeat("é", 3000),
		strings.Repeat("\x80", 5000),
		"x" + strings.Repeat("\xbf", 2000),
	} {
		fk := fitKey(k)
		if len(fk) <= maxKey {
			t.Errorf("a %d-byte key starting %q is stored as %q (%d bytes): a short key could be the same", len(k), k[:4], fk, len(fk))
		}
	}
}

// TestConnectionError: only a failure of the connection sends a read
// again, not "no rows".
func TestConnectionError(t *testing.T) {
	if connectionError(pgx.ErrNoRows) || connectionError(fmt.Errorf("reading: %w", pgx.ErrNoRows)) {
		t.Error("no rows is taken for a connection failure: a read of a missing token is sent three times")
	}
}

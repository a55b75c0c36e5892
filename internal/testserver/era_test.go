package testserver

import "testing"

func TestParseEra(t *testing.T) {
	t.Parallel()
	for _, e := range []Era{Modern, Legacy} {
		got, err := ParseEra(e.String())
		if err != nil || got != e {
			t.Errorf("ParseEra(%q) = %v, %v", e.String(), got, err)
		}
	}
	if _, err := ParseEra("future"); err == nil {
		t.Error("ParseEra accepted an unknown era")
	}
}

package jsonscan

import (
	"strings"
	"testing"
)

func TestValue(t *testing.T) {
	for _, tc := range []struct {
		in       string
		maxDepth int
		want     int
	}{
		{`"a\"b",`, 0, 6},
		{`"a\\"b`, 0, 5},
		{`"open`, 0, -1},
		{`{"a":[1,{"b":"}"}]} x`, 0, 19},
		{`{"a":[1,2]`, 0, -1},
		{`[[[]]]`, 3, 6},
		{`[[[]]]`, 2, -1},
		{`12.5e3}`, 0, 6},
		{`true ,`, 0, 4},
		{`,`, 0, -1},
		{``, 0, -1},
		{strings.Repeat("[", 5000) + strings.Repeat("]", 5000), 1000, -1},
	} {
		if got := Value([]byte(tc.in), 0, tc.maxDepth); got != tc.want {
			t.Errorf("Value(%q, 0, %d) = %d, want %d", tc.in, tc.maxDepth, got, tc.want)
		}
	}
	if got := Space([]byte(" \t\r\nx"), 0); got != 4 {
		t.Errorf("Space = %d, want 4", got)
	}
}

func FuzzValue(f *testing.F) {
	f.Add([]byte(`{"a":"b\"c","d":[1,2,{"e":null}]}`), 3)
	f.Add([]byte(`"\\\\"`), 0)
	f.Add([]byte(`[[[[`), 2)
	f.Fuzz(func(t *testing.T, b []byte, maxDepth int) {
		for _, i := range []int{0, len(b) / 2} {
			if got := Value(b, i, maxDepth); got != -1 && (got <= i || got > len(b)) {
				t.Fatalf("Value(%q, %d, %d) = %d, outside (%d, %d]", b, i, maxDepth, got, i, len(b))
			}
		}
	})
}

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

func TestMembers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // the members, key=value, or "refused"
	}{
		{` {"a":1, "b" : [2,{"c":3}] ,"d":"x"} `, `"a"=1 "b"=[2,{"c":3}] "d"="x"`},
		{`{}`, ``},
		{`{"a":1}x`, `refused`},
		{`{"a":1,}`, `refused`},
		{`{"a" 1}`, `refused`},
		{`{a:1}`, `refused`},
		{`[1]`, `refused`},
		{`{"a":1`, `refused`},
	} {
		var got []string
		b := []byte(tc.in)
		ok := Members(b, 0, func(k, kend, v, vend int) bool {
			got = append(got, string(b[k:kend])+"="+string(b[v:vend]))
			return true
		})
		s := strings.Join(got, " ")
		if !ok {
			s = "refused"
		}
		if s != tc.want {
			t.Errorf("Members(%s): %s, want %s", tc.in, s, tc.want)
		}
	}
	stopped := Members([]byte(`{"a":1,"b":2}`), 0, func(k, kend, v, vend int) bool { return false })
	if stopped {
		t.Error("Members reported true after fn returned false")
	}
}

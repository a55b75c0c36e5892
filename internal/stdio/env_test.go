package stdio

import (
	"runtime"
	"slices"
	"testing"
)

// TestEnviron: a child gets the safe set, what inherit names (a name, a
// prefix, "*") and extra; never an exported shell function by default.
func TestEnviron(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the Unix safe set")
	}
	environ := []string{"HOME=/home/u", "PATH=/bin", "SHELL=() { :; }", "USER=u", "AWS_KEY=k", "AWS_REGION=r", "GITHUB_TOKEN=g", "=odd", "NOEQUALS"}
	for _, tc := range []struct {
		inherit, extra, want []string
	}{
		{nil, nil, []string{"HOME=/home/u", "PATH=/bin", "USER=u"}},
		{[]string{"AWS_*"}, []string{"X=1"}, []string{"HOME=/home/u", "PATH=/bin", "USER=u", "AWS_KEY=k", "AWS_REGION=r", "X=1"}},
		{[]string{"GITHUB_TOKEN", "SHELL"}, nil, []string{"HOME=/home/u", "PATH=/bin", "SHELL=() { :; }", "USER=u", "GITHUB_TOKEN=g"}},
		{[]string{"*"}, nil, []string{"HOME=/home/u", "PATH=/bin", "SHELL=() { :; }", "USER=u", "AWS_KEY=k", "AWS_REGION=r", "GITHUB_TOKEN=g"}},
	} {
		if got := Environ(environ, tc.inherit, tc.extra); !slices.Equal(got, tc.want) {
			t.Errorf("inherit %v: %v, want %v", tc.inherit, got, tc.want)
		}
	}
}

package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestModuleVersion(t *testing.T) {
	const path = "example.com/m"
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"main module", debug.BuildInfo{Main: debug.Module{Path: path, Version: "v1.2.3"}}, "v1.2.3"},
		{"main module from a directory", debug.BuildInfo{Main: debug.Module{Path: path}}, "(devel)"},
		{"dependency", debug.BuildInfo{Main: debug.Module{Path: "example.com/app"}, Deps: []*debug.Module{{Path: "other", Version: "v9.0.0"}, {Path: path, Version: "v0.4.0"}}}, "v0.4.0"},
		{"dependency replaced by a version", debug.BuildInfo{Deps: []*debug.Module{{Path: path, Version: "v0.4.0", Replace: &debug.Module{Path: "fork", Version: "v0.5.0"}}}}, "v0.5.0"},
		{"dependency replaced by a directory", debug.BuildInfo{Deps: []*debug.Module{{Path: path, Version: "v0.4.0", Replace: &debug.Module{Path: "../m"}}}}, "(devel)"},
		{"absent", debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "v1.0.0"}}, "(devel)"},
	} {
		if got := ModuleVersion(&tc.bi, path); got != tc.want {
			t.Errorf("%s: ModuleVersion = %q, want %q", tc.name, got, tc.want)
		}
	}
}

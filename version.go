package mcpadapter

import (
	"runtime/debug"
	"sync"
)

// modulePath is this module's path, as the go command records it in a
// program's build information.
const modulePath = "github.com/mcpadapter/mcpadapter"

// Version returns the version of this module the running program was built
// with, as the go command recorded it ("v0.1.0"). A program built from a
// clone of the repository (its own module, or the module taken from a
// directory through go.work or a replace directive) reports "(devel)", as
// the go command does for such builds. NewClient sends it to servers as the
// client's version.
func Version() string { return buildVersion() }

var buildVersion = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	return moduleVersion(bi, modulePath)
})

// moduleVersion is the version of module path in bi, or "(devel)" when the
// module was built from a directory or the version is unknown.
func moduleVersion(bi *debug.BuildInfo, path string) string {
	m := &bi.Main
	if m.Path != path {
		m = nil
		for _, d := range bi.Deps {
			if d.Path == path {
				m = d
				break
			}
		}
	}
	switch {
	case m == nil:
		return "(devel)"
	case m.Replace != nil:
		if m.Replace.Version == "" { // a directory
			return "(devel)"
		}
		return m.Replace.Version
	case m.Version == "":
		return "(devel)"
	}
	return m.Version
}

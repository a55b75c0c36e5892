package buildinfo

import "runtime/debug"

// Version returns the version of module path in the running program's
// build information, or "(devel)" (see ModuleVersion).
func Version(path string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	return ModuleVersion(bi, path)
}

// ModuleVersion is the version of module path in bi, or "(devel)" when the
// module was built from a directory or the version is unknown.
func ModuleVersion(bi *debug.BuildInfo, path string) string {
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

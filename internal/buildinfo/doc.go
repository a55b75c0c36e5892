// Package buildinfo says which version of a module the running program
// was built with, as the go command recorded it in the program's build
// information (Version, ModuleVersion): a module version, or "(devel)"
// for a module built from a directory (a clone, go.work, a replace
// directive naming a directory), as the go command reports such builds.
//
// The root package names its module and sends the version to servers as
// the client's. It imports the standard library only.
package buildinfo

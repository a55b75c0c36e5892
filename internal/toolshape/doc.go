// Package toolshape checks and merges the tool transforms of one server:
// a prefix and a note for every tool, and per tool a new name,
// description, arguments, timeout, result limit and task mode, given in a
// server's config entry or in the root's Options.Transforms (New), the
// second over the first (Server.Over). It says which of a listing's
// tools a shape leaves out (Server.Disabled) and which of its tool
// transforms name no listed tool (Server.Unmatched).
//
// Its inputs are plain: the root's ServerTransform and ToolTransform as
// values (Tool, with the argument transforms as argplan.Args), and the
// config.Paths its problems are named by. Applying a shape to a listed
// tool, and what a problem means to a user (a ConfigError, a
// TransformError), are the root's (transform.go). It imports the
// standard library and internal/argplan, internal/config,
// internal/servername and internal/truncate only, never the root.
package toolshape

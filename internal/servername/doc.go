// Package servername names a server from the command line that starts it
// (the package or script an interpreter runs: npx, uvx, node, python -m …)
// or from its own serverInfo.name, as a name a model API accepts; and the
// name a model sees of a tool (ToolName: prefixed, sanitised, kept
// distinct) and the argument names model APIs take (ValidArgName).
//
// Its inputs are plain: a program path and its arguments, or a string. It
// reads the package.json a JavaScript server belongs to, imports the
// standard library only, and knows nothing of the root package.
package servername

// Package argplan applies argument transforms to a tool: Transform
// rewrites the input schema a model sees (arguments renamed, described,
// given defaults or hidden) and returns the Plan that turns the model's
// arguments back into the server's (Plan.Wire). The JSON is kept as the
// server wrote it: members in order, values verbatim. A Checker checks
// the server's arguments against the server's input schema before a call
// is sent, and names each wrong argument as the model named it
// (Checker.Check).
//
// Its inputs are plain: the schema's JSON and an Arg per argument (the
// root's ArgTransform as values). It imports the standard library and
// the argcheck package only, and knows nothing of the root package, of
// go-sdk or of connections.
package argplan

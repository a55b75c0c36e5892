// Package listing reads every page of a paginated MCP listing (tools/list,
// prompts/list, resources/list, resources/templates/list) within its
// bounds: items, bytes (counted as the JSON of the items and cursors),
// pages, and a cursor handed out twice (a pagination that loops). A
// listing past a bound is a *LimitError; what the bounds are, the
// retry of a cached listing and the public error are the root's.
//
// It imports only the standard library.
package listing

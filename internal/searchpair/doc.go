// Package searchpair is the machinery of the tool-search pair
// (search_tools and call_tool) that stands for a large catalog: the
// pair's definitions, byte for byte the same on every turn and in every
// process; the decoding of the model's arguments; the text of
// search_tools' answers and of call_tool's refusals (ParseSearch,
// Search, ParseCall, Resolve); the bookkeeping of tools removed since the
// last listing (Removed); one principal's catalog, its index and when it
// must be listed again (Catalog); and the catalogs kept per principal,
// bounded, the least recently used forgotten first (Partitions).
//
// When the pair replaces the catalog, which tools a model sees, how the
// catalog is listed and what a call does are the root's. It imports the
// standard library and the public toolsearch package only.
package searchpair

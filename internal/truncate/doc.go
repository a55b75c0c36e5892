// Package truncate cuts a tool result's text to a byte limit: on a UTF-8
// boundary, with a note saying how much was shown, the note counted
// against the limit (Text, Note, UTF8). What the limit is, and which
// blocks of a result are cut, are the root's (Result.Text,
// Result.ModelContent). It imports only the standard library.
package truncate

package testserver

import (
	"strconv"
	"strings"
)

// BigIn is the input of the big tool of the mcptestserver command.
type BigIn struct {
	MB int `json:"mb"`
}

// BigText is the text the big tool returns for mb: mb MiB of the letter x.
func BigText(mb int) string { return strings.Repeat("x", mb<<20) }

// Output of the mcptestserver command's hostile flags and tools, exported
// for assertions.
const (
	// GarbageLine is the non-JSON line -garbage writes before every response.
	GarbageLine = "%%% garbage on stdout %%%"
	// TruncatedJSON is the cut-off JSON object -garbage writes before every
	// response.
	// Its id is one no client uses: a truncated response whose id can be
	// read fails the call that has that id.
	TruncatedJSON = `{"jsonrpc":"2.0","id":987654320,"result":{"content":[{"type":"text","text":"trunc`
	// WrongIDText is the text of the responses -wrong-ids sends to ids
	// nobody asked for; a client must never show it.
	WrongIDText = "answer to a request nobody made"
	// ClosedStdoutMessage is what the close_stdout tool writes to stderr
	// after closing stdout.
	ClosedStdoutMessage = "mcptestserver: closed stdout; running on"
)

// StoppedReadingMessage is what the -stop-reading server writes to stderr
// when it stops reading stdin.
const StoppedReadingMessage = "mcptestserver: stopped reading stdin"

// SpamLine is line i of the non-JSON lines the spam tool writes to stdout.
func SpamLine(i int) string { return "spam line " + strconv.Itoa(i) }

// Kinds of undecodable response the bad_response tool sends (its input
// {"kind": ...}), and what -deep-schema puts in a tool's input schema.
const (
	// BadNaN: a structuredContent value NaN (what Python's json.dumps
	// writes for a float NaN), id before the result.
	BadNaN = "nan"
	// BadNaNIDLast: the same with the id after the result, as the
	// TypeScript SDK orders a response.
	BadNaNIDLast = "nan_id_last"
	// BadTruncated: the line ends in the middle of the result.
	BadTruncated = "truncated"
	// BadDeep: a structuredContent value nested DeepNesting arrays deep.
	BadDeep = "deep"
)

// DeepNesting is how deep BadDeep and -deep-schema nest.
const DeepNesting = 5000

// BadMarker is the JSON string the test server's stdout writer replaces
// to make a response undecodable: BadMarker + kind.
const BadMarker = "mcptestserver:bad:"

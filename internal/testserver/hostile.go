package testserver

import "strings"

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
	TruncatedJSON = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"trunc`
	// WrongIDText is the text of the responses -wrong-ids sends to ids
	// nobody asked for; a client must never show it.
	WrongIDText = "answer to a request nobody made"
	// ClosedStdoutMessage is what the close_stdout tool writes to stderr
	// after closing stdout.
	ClosedStdoutMessage = "mcptestserver: closed stdout; running on"
)

package testserver

import (
	"encoding/base64"
	"encoding/json"
)

// ScriptedKind starts the bad_response kind that makes the stdio test
// server answer with a scripted line instead: ScriptedArgs.
const ScriptedKind = "scripted:"

// ScriptedIDMark is replaced, in a scripted reply, by the id of the request
// it answers (its JSON text).
const ScriptedIDMark = "@ID@"

// ScriptedArgs returns the arguments of a bad_response call that the stdio
// test server answers with reply, written to stdout as it is (with a
// newline added) after ScriptedIDMark is replaced by the request's id:
// a scripted peer for differential tests, behind a real handshake of
// either era.
func ScriptedArgs(reply string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"kind": ScriptedKind + base64.RawURLEncoding.EncodeToString([]byte(reply))})
	return b
}

package gateway

import (
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// go-sdk's handler refuses some POSTs whole, before it gives any of their
// messages to the session: a wrong Content-Type or Accept, a protocol
// version it does not speak, a Last-Event-ID, a batch with a message it
// cannot read, a batch in a session of 2025-06-18 or later. The screen of
// answers (screenAnswers) acts before go-sdk sees the POST: it would hand
// an answer of such a POST to another replica's question, and forget the
// question of an answer it keeps, though go-sdk gives the answer to
// nothing. So a POST with answers that go-sdk refuses is refused by the
// screen, with go-sdk's status and message, and its answers are neither
// given nor handed.
//
// go-sdk also refuses a batch whole for a request or notification it does
// not take (a method it does not have, an id where none belongs, params
// missing, a request id already in flight), which the screen cannot tell
// beforehand. A batch that holds both answers and other messages is not
// one the handshake-era transport allows (a batch of responses, or one of
// requests and notifications: 2025-03-26), so the screen refuses it
// whole, and a batch of answers only is one go-sdk takes.

// batchesUntil is the first protocol version in which go-sdk refuses
// JSON-RPC batches.
const batchesUntil = "2025-06-18"

// refusal returns the status and message with which go-sdk's handler
// refuses POST r, whose body the screen read as sc; 0 when it does not.
func refusal(r *http.Request, sc screened) (int, string) {
	version := r.Header.Get("Mcp-Protocol-Version")
	if supported := mcp.SupportedProtocolVersions(); version != "" && version < modernVersion && !slices.Contains(supported, version) {
		return http.StatusBadRequest, fmt.Sprintf("Bad Request: Unsupported protocol version (supported versions: %s)", strings.Join(supported, ","))
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return http.StatusUnsupportedMediaType, "Content-Type must be 'application/json'"
	}
	if jsonOK, streamOK := accepts(r.Header.Values("Accept")); !jsonOK || !streamOK {
		return http.StatusBadRequest, "Accept must contain both 'application/json' and 'text/event-stream'"
	}
	if len(r.Header.Values("Last-Event-ID")) > 0 {
		return http.StatusBadRequest, "can't send Last-Event-ID for POST request"
	}
	if sc.unreadable {
		return http.StatusBadRequest, "malformed payload: a message of the batch is not JSON-RPC"
	}
	if sc.batch && version >= batchesUntil {
		return http.StatusBadRequest, fmt.Sprintf("JSON-RPC batching is not supported in %s and later (request version: %s)", batchesUntil, version)
	}
	if sc.batch && sc.answers && sc.others {
		return http.StatusBadRequest, "a JSON-RPC batch holds responses, or requests and notifications, not both"
	}
	return 0, ""
}

// accepts reports whether Accept header values take JSON and event
// streams, as go-sdk reads them.
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, v := range values {
		for raw := range strings.SplitSeq(v, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

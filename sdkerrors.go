package mcpadapter

import (
	"errors"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file is the one place that recognises go-sdk errors by their text.
// go-sdk v1.8.0 exports neither its "client is closing" nor its "rejected
// by transport" error (both live in its internal jsonrpc2 package), so they
// are matched by code and message here, and TestSDKErrorWording pins the
// wording: a go-sdk upgrade that changes it fails that test instead of
// silently changing which requests are retried.

const (
	// sdkClientClosing is the message of go-sdk's error for a request
	// made while its connection is closing (jsonrpc2.ErrClientClosing).
	sdkClientClosing = "client is closing"
	// sdkRejected is the message of go-sdk's error for a request its HTTP
	// client could not deliver or got a non-JSON-RPC failure for
	// (jsonrpc2.ErrRejected, code -32005).
	sdkRejected = "rejected by transport"
	// codeRejectedByTransport is the code of that error.
	codeRejectedByTransport = -32005
)

// isServerError reports whether err is a JSON-RPC error response from the
// server, as opposed to a failure to talk to it. go-sdk reports HTTP
// failures (refused connections, 5xx, 429) as the JSON-RPC error
// "rejected by transport"; those are transport failures.
func isServerError(err error) bool {
	if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) {
		return false
	}
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		return false
	}
	return !isRejectedByTransport(we)
}

// isRejectedByTransport reports whether we is go-sdk's "rejected by
// transport" error.
func isRejectedByTransport(we *jsonrpc.Error) bool {
	return we.Code == codeRejectedByTransport && we.Message == sdkRejected
}

// wasNotSent reports whether err says the request never reached the
// server: a write to a stdio server that failed, an HTTP connection that
// could not be made,
// or a connection already closing when the request was made (go-sdk's
// "client is closing").
func wasNotSent(err error) bool {
	var write *stdio.WriteError
	var dial *wire.NotSentError
	if errors.As(err, &write) || errors.As(err, &dial) {
		return true
	}
	return errors.Is(err, mcp.ErrConnectionClosed) && strings.Contains(err.Error(), sdkClientClosing)
}

// sdkUnknownContent is the start of go-sdk's error for a tool result with
// a content block of a type it does not know ("unrecognized content type
// %q"); a block without a type gets it too, with "".
const sdkUnknownContent = "unrecognized content type "

// isUnknownContentError reports whether err is go-sdk refusing a tool
// result for a content block of a type it does not know.
func isUnknownContentError(err error) bool {
	return !isServerError(err) && strings.Contains(err.Error(), sdkUnknownContent)
}

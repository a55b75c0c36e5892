// Package sdkerr is the one place that recognises go-sdk's errors by
// their text: whether a request never reached the server (WasNotSent),
// whether an error is the server's own JSON-RPC answer (IsServerError),
// the error of a request the server has had (DeliveredError),
// whether go-sdk refused a result for a content block it does not know
// (IsUnknownContent); and it makes go-sdk's error for an HTTP request
// that could not be delivered (NewRejected), for code that sends requests
// beside go-sdk.
//
// go-sdk v1.8.0 exports neither its "client is closing" nor its "rejected
// by transport" error (both live in its internal jsonrpc2 package), so they
// are matched by code and message here, and TestSDKErrorWording pins the
// wording: a go-sdk upgrade that changes it fails that test instead of
// silently changing which requests are retried.
//
// It imports go-sdk, internal/stdio and internal/wire (for their "not
// sent" errors) and nothing else of this module.
package sdkerr

import (
	"errors"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// clientClosing is the message of go-sdk's error for a request
	// made while its connection is closing (jsonrpc2.ErrClientClosing).
	clientClosing = "client is closing"
	// rejected is the message of go-sdk's error for a request its HTTP
	// client could not deliver or got a non-JSON-RPC failure for
	// (jsonrpc2.ErrRejected, code -32005).
	rejected = "rejected by transport"
	// codeRejected is the code of that error.
	codeRejected = -32005
)

// IsServerError reports whether err is a JSON-RPC error response from the
// server, as opposed to a failure to talk to it. go-sdk reports HTTP
// failures (refused connections, 5xx, 429) as the JSON-RPC error
// "rejected by transport"; those are transport failures.
func IsServerError(err error) bool {
	if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) {
		return false
	}
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		return false
	}
	return !isRejected(we)
}

// NewRejected returns go-sdk's error for a request its HTTP client could
// not deliver (wrap the cause beside it, as go-sdk does).
func NewRejected() *jsonrpc.Error {
	return &jsonrpc.Error{Code: codeRejected, Message: rejected}
}

// isRejected reports whether we is go-sdk's "rejected by
// transport" error.
func isRejected(we *jsonrpc.Error) bool {
	return we.Code == codeRejected && we.Message == rejected
}

// WasNotSent reports whether err says the request never reached the
// server: a write to a stdio server that failed, an HTTP connection that
// could not be made,
// or a connection already closing when the request was made (go-sdk's
// "client is closing"); never for a *DeliveredError.
func WasNotSent(err error) bool {
	var delivered *DeliveredError
	if errors.As(err, &delivered) {
		return false
	}
	var write *stdio.WriteError
	var dial *wire.NotSentError
	if errors.As(err, &write) || errors.As(err, &dial) {
		return true
	}
	return errors.Is(err, mcp.ErrConnectionClosed) && strings.Contains(err.Error(), clientClosing)
}

// DeliveredError is the error of a request the server has had, although
// the error it wraps may say that a request was never sent: a call of the
// fast path handed over to go-sdk, which failed before it took the
// answer the fast path holds; a multi-round-trip call whose round the
// server answered and whose next round then failed. It is never sent
// again (WasNotSent).
type DeliveredError struct{ Err error }

func (e *DeliveredError) Error() string { return e.Err.Error() }
func (e *DeliveredError) Unwrap() error { return e.Err }

// unknownContent is the start of go-sdk's error for a tool result with
// a content block of a type it does not know ("unrecognized content type
// %q"); a block without a type gets it too, with "".
const unknownContent = "unrecognized content type "

// IsUnknownContent reports whether err is go-sdk refusing a tool
// result for a content block of a type it does not know.
func IsUnknownContent(err error) bool {
	return !IsServerError(err) && strings.Contains(err.Error(), unknownContent)
}

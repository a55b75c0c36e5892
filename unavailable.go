package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/wire"
)

// TransportErrorResult returns the result that stands for te, a failure to
// reach a server, so that a model can read it and the run go on: IsError
// set, Content saying which server is unavailable and why (one line, URL
// secrets redacted, without the server's stderr), and Failure set to te
// for the application. Bindings use it for their "transport errors as
// results" setting; see Options.TransportErrorsAsResults.
func TransportErrorResult(te *TransportError) *Result {
	msg := fmt.Sprintf("The %q server is unavailable: %s. Tell the user that this tool cannot be used now, or go on without it.", te.Server, failureCause(te))
	res := errorResult(msg)
	res.Failure = te
	return res
}

// failureCause is the first line of te's cause, URL secrets redacted, cut
// to about 300 bytes, without a final period.
func failureCause(te *TransportError) string {
	if te.Err == nil {
		return "the connection failed"
	}
	cause, _, _ := strings.Cut(wire.RedactURLSecrets(te.Err.Error()), "\n")
	if len(cause) > 300 {
		cause = strings.ToValidUTF8(cause[:300], "") + "…"
	}
	return strings.TrimSuffix(cause, ".")
}

// softened turns a call's transport failure into a result when the tool
// was listed with Options.TransportErrorsAsResults. A call whose own
// context ended keeps its error: the run is being stopped, not the server.
func (t *Tool) softened(ctx context.Context, res *Result, err error) (*Result, error) {
	if err == nil || !t.soft || ctx.Err() != nil {
		return res, err
	}
	var te *TransportError
	if !errors.As(err, &te) {
		return res, err
	}
	t.client.log.Warn("server unavailable; the model is told so", "tool", t.Name, "op", te.Op, "cause", failureCause(te))
	return TransportErrorResult(te), nil
}

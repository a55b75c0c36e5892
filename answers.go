package mcpadapter

import (
	"fmt"
	"strings"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/park"
)

// Every question a tool call asks (every *InputRequiredError) has an ID of
// its own, PendingCall.ID, and is answered at most once. A client in
// ElicitInterrupt mode keeps, for the questions it has seen answered or
// closed, what became of them (park.Book): a second resume of one — a
// double submit, a retried request, an old checkpoint — is refused with
// an *AnsweredError that says so, and nothing is sent.

// AnsweredError is returned by Resume for a question that is no longer
// open: it was answered already (another resume took it: a double
// submit, a retry, an old checkpoint), or it was closed without an answer
// (the user moved on, or nobody answered within Options.ParkTimeout).
// Nothing was sent to the server.
type AnsweredError struct {
	// Server and Tool name the call (the server's name for the tool).
	Server, Tool string
	// Question is the PendingCall.ID of the question, Round its round.
	Question string
	Round    int
	// Action is the answer the question was given; "" when it was closed
	// without one.
	Action elicitation.Action
	// Closed says why a question without an answer was closed.
	Closed string
	// Now says what the call did after the answer ("completed", "asked
	// question 2", "failed: ...") or "" while it runs.
	Now string
}

func (e *AnsweredError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mcpadapter: server %q, tool %q: question %d was ", e.Server, e.Tool, e.Round)
	if e.Action != "" {
		fmt.Fprintf(&b, "already answered (%s) by an earlier resume", e.Action)
	} else {
		fmt.Fprintf(&b, "closed without an answer: %s", e.Closed)
	}
	if e.Now != "" {
		fmt.Fprintf(&b, "; the call then %s", e.Now)
	} else if e.Action != "" {
		b.WriteString("; the call is still running")
	}
	b.WriteString("; this answer was not sent")
	return b.String()
}

// answeredError is the error of a resume of question id, which rec says
// was answered or closed.
func answeredError(id string, rec park.Record[*Result]) *AnsweredError {
	return &AnsweredError{Server: rec.Server, Tool: rec.Tool, Question: id, Round: rec.Round, Action: elicitation.Action(rec.Action), Closed: rec.Reason, Now: rec.Now}
}

// DenyReason says why a resume was refused by ResumeDeniedError.
type DenyReason string

// The reasons a resume is refused.
const (
	// DeniedPrincipal: the call was made for another principal
	// (CallIdentity.Principal) than the resume's context names.
	DeniedPrincipal DenyReason = "principal"
	// DeniedTool: the pending call belongs to another tool or server than
	// the one resuming it.
	DeniedTool DenyReason = "tool"
	// DeniedProtocol: the server now speaks another protocol version than
	// the one it asked the question in, so its question cannot be
	// answered; call the tool again.
	DeniedProtocol DenyReason = "protocol"
)

// ResumeDeniedError is returned by Resume (and Client.ResumeTask) for a
// pending call this client will not resume; nothing was sent.
type ResumeDeniedError struct {
	Server, Tool string
	Reason       DenyReason
	// Detail says what did not match.
	Detail string
}

func (e *ResumeDeniedError) Error() string {
	return fmt.Sprintf("mcpadapter: server %q, tool %q: resume refused (%s): %s", e.Server, e.Tool, e.Reason, e.Detail)
}

// outcomeText says what a call came to, for an AnsweredError.
func outcomeText(res *Result, err error) string {
	if ir, ok := err.(*InputRequiredError); ok {
		if len(ir.Pending.Requests) == 0 {
			return "was queued behind another call's question"
		}
		return fmt.Sprintf("asked question %d", ir.Pending.Round)
	}
	switch {
	case err != nil:
		msg, _, _ := strings.Cut(err.Error(), "\n")
		return "failed: " + msg
	case res != nil && res.IsError:
		return "completed with a tool error"
	}
	return "completed"
}

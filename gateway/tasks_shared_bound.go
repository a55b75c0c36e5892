package gateway

import (
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// encodeTask returns rec's JSON, at most maxStoredRecord bytes, so that
// every replica can read it. Over that, the status message, the error's
// message and the questions' messages are cut to maxTaskText each, and
// an error's data over maxTaskText is dropped. Still over, a record with
// a client's answers is refused (the answers are not written); any other
// is written as failed, with an error saying why, without its result and
// questions (the replica running the task sees it ended on its next
// beat and ends the call).
func encodeTask(id string, rec *taskRecord) ([]byte, error) {
	b, err := json.Marshal(rec)
	if err != nil || len(b) <= maxStoredRecord {
		return b, err
	}
	cutTexts(rec)
	if b, err = json.Marshal(rec); err != nil || len(b) <= maxStoredRecord {
		return b, err
	}
	if len(rec.Answers) > 0 {
		return nil, fmt.Errorf("task %q: with the answers to its questions, its record would be %d bytes, over the %d bytes the gateway keeps of a task for its replicas", id, len(b), maxStoredRecord)
	}
	rec.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("task %q: its record would be %d bytes, over the %d bytes the gateway keeps of a task for its replicas; its result and questions are not kept", id, len(b), maxStoredRecord)}
	rec.Status, rec.Message, rec.Result, rec.Asks = stFailed, rec.Error.Message, nil, nil
	if rec.Expires.IsZero() {
		rec.Expires = time.Now().UTC().Add(time.Duration(rec.TTLMs) * time.Millisecond)
	}
	return json.Marshal(rec)
}

// cutTexts cuts rec's status message, error and questions to maxTaskText
// each; the error and questions are copied first (they may be the running
// task's own).
func cutTexts(rec *taskRecord) {
	rec.Message = cutText(rec.Message)
	if rec.Error != nil {
		e := *rec.Error
		e.Message = cutText(e.Message)
		if len(e.Data) > maxTaskText {
			e.Data = nil
		}
		rec.Error = &e
	}
	if len(rec.Asks) > 0 {
		asks := make(map[string]*mcp.ElicitParams, len(rec.Asks))
		for k, p := range rec.Asks {
			if p == nil {
				continue
			}
			c := *p
			c.Message = cutText(c.Message)
			asks[k] = &c
		}
		rec.Asks = asks
	}
}

// cutText returns s cut to about maxTaskText bytes, at a character's
// start, saying how long it was.
func cutText(s string) string {
	if len(s) <= maxTaskText {
		return s
	}
	i := maxTaskText
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return fmt.Sprintf("%s… (cut: %d bytes in all)", s[:i], len(s))
}

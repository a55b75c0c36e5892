//go:build !mcpadapter_nofastpath

// The HTTP fuzzer and its cancellation table compare a client with the
// fast path and one without; built with -tags mcpadapter_nofastpath both
// would take go-sdk's path, so they are not built there.

package mcpadapter_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// fuzzStatuses are the HTTP statuses FuzzHTTPFastPathSameAsSDK answers
// with (0 is 200).
var fuzzStatuses = [8]int{0, 0, 0, 0, 202, 400, 404, 500}

// fuzzContentTypes are the Content-Types it sends ("" is the script's
// default, "-" none).
var fuzzContentTypes = [4]string{"", "application/json; charset=utf-8", "text/plain", "-"}

// fuzzScript is the script FuzzHTTPFastPathSameAsSDK plays for its
// inputs. knobs: bit 1 an event stream (else a JSON body), bits 2–3 how
// body is framed (a result, an error, a result with its id last, or the
// whole body or stream), bits 4–6 the status, bit 7 CRLF line ends; more:
// bits 0–1 the Content-Type. A stream's reconnection delay is fixed at
// 1 ms (the fuzzer's own retry fields are defused): go-sdk's default, 1 to
// 2 s with jitter, and fuzzed retry values would slow the run and, near
// the client's timeout, race it, so that the two paths could differ by
// chance.
func fuzzScript(knobs, more uint8, body string) testserver.HTTPScript {
	var msg string
	switch knobs >> 2 & 3 {
	case 0:
		msg = `{"jsonrpc":"2.0","id":@ID@,"result":` + body + `}`
	case 1:
		msg = `{"jsonrpc":"2.0","id":@ID@,"error":` + body + `}`
	case 2:
		msg = `{"jsonrpc":"2.0","result":` + body + `,"id":@ID@}`
	default:
		msg = body
	}
	s := testserver.HTTPScript{
		Status:      fuzzStatuses[knobs>>4&7],
		ContentType: fuzzContentTypes[more&3],
		CRLF:        knobs&0x80 != 0,
	}
	if knobs>>1&1 == 0 {
		s.Body = msg
		return s
	}
	s.Events = []testserver.SSEEvent{{Retry: 1}}
	if knobs>>2&3 == 3 {
		s.Events = append(s.Events, testserver.SSEEvent{Raw: strings.ReplaceAll(msg, "retry", "retrx")})
	} else {
		s.Events = append(s.Events, testserver.SSEEvent{Data: msg})
	}
	return s
}

// FuzzHTTPFastPathSameAsSDK feeds both paths the same answers over
// streamable HTTP (fuzzScript): a body or event stream framed as knobs
// and more say, to a client of either era (knobs bit 0: 2026-07-28).
func FuzzHTTPFastPathSameAsSDK(f *testing.F) {
	for _, answer := range httpAnswers() {
		if strings.Contains(answer, testserver.ScriptedPadMark) {
			continue
		}
		// As a JSON body, the last message, if it answers the call (the
		// others wait for the timeout: the table has them).
		last := answer[strings.LastIndexByte(answer, '\n')+1:]
		for _, era := range []uint8{0, 1} {
			if strings.Contains(last, `"id":@ID@`) {
				f.Add(era|0x0c, uint8(0), last)
			}
			f.Add(era|0x0e, uint8(0), "data: "+strings.ReplaceAll(answer, "\n", "\n\ndata: ")) // stream
		}
	}
	for i := range fuzzStatuses {
		f.Add(uint8(i<<4|0x0c), uint8(0), `{"jsonrpc":"2.0","id":@ID@,"error":{"code":-32000,"message":"m"}}`)
	}
	f.Add(uint8(0x02), uint8(0), `{"content":[{"type":"text","text":"seed"}]}`)
	f.Add(uint8(0x86), uint8(1), `{"code":1,"message":"m"}`)
	f.Add(uint8(0x0f), uint8(2), ": c\nid: e\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":@ID@,\"result\":{}}\n\n")
	pairs := [2]*httpDiffPair{newHTTPDiffPair(f, testserver.Legacy, false), newHTTPDiffPair(f, testserver.Modern, false)}
	f.Fuzz(func(t *testing.T, knobs, more uint8, body string) {
		pairs[knobs&1].check(t, fuzzScript(knobs, more, idMarksAsIDs(body)))
	})
}

// A scripted call whose answer the peer holds — before the status line,
// or in the event stream after it — ends the same way on both paths when
// its context ends or ClientOptions.Timeout runs out: the same error, the
// peer sees the request abandoned alike, and on a 2025-11-25 session the
// peer receives notifications/cancelled for the call's own id from both.
// Both clients go on.
func TestHTTPFastPathCancelAndTimeout(t *testing.T) {
	t.Parallel()
	const ok = `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"late"}]}}`
	holds := map[string]testserver.HTTPScript{
		"before the status": {DelayMs: 10_000, Body: ok},
		"in the stream":     {Events: []testserver.SSEEvent{{Comment: "working"}, {DelayMs: 10_000, Data: ok}}},
	}
	for _, era := range []testserver.Era{testserver.Legacy, testserver.Modern} {
		t.Run(era.String(), func(t *testing.T) {
			t.Parallel()
			p := newHTTPDiffPair(t, era, false)
			for name, s := range holds {
				for _, after := range []time.Duration{150 * time.Millisecond, time.Minute} { // the caller's deadline, then Timeout's
					f, g := p.cancelledOn(t, p.fast, s, after), p.cancelledOn(t, p.sdk, s, after)
					if f != g {
						t.Errorf("held %s, deadline %v:\nfast path: %s\ngo-sdk:    %s", name, after, f, g)
					}
					t.Logf("held %s, deadline %v: %s", name, after, g)
					if era == testserver.Legacy && !strings.Contains(g, "notice true") {
						t.Errorf("held %s, deadline %v: the server got no notifications/cancelled for the call: %s", name, after, g)
					}
				}
			}
			echoOK(t, testCtx(t), p.fast, "after the cancelled calls")
			echoOK(t, testCtx(t), p.sdk, "after the cancelled calls")
		})
	}
}

// cancelledOn calls the scripted tool on c with a deadline after from
// now, and describes how it ended: the error (with the call's id masked)
// and its class, whether the peer saw the request abandoned and a
// notifications/cancelled for its id (waiting up to 5 s for both, as they
// come after the call returns).
func (p *httpDiffPair) cancelledOn(t *testing.T, c *mcpadapter.Client, s testserver.HTTPScript, after time.Duration) string {
	t.Helper()
	before := len(p.peer.Calls())
	ctx, cancel := context.WithTimeout(context.Background(), after)
	defer cancel()
	var err error
	within(t, 5*time.Second, "a held call", func() {
		_, err = c.CallTool(ctx, testserver.ScriptedTool, testserver.HTTPScriptArgs(s), nil)
	})
	if err == nil {
		t.Fatal("the held call returned no error")
	}
	class := "other"
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		class = "deadline"
	case errors.Is(err, context.Canceled):
		class = "canceled"
	}
	var abandoned, notice bool
	var id string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		calls := p.peer.Calls()[before:]
		if len(calls) == 0 {
			continue
		}
		id = calls[0].ID
		abandoned = calls[0].Abandoned
		notice = slices.Contains(p.peer.Cancelled(), id)
		if abandoned && notice {
			break
		}
	}
	return fmt.Sprintf("error (%s) %s; abandoned %v; notice %v", class, maskIDs(err.Error(), id), abandoned, notice)
}

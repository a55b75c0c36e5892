package gateway

import (
	"net/http"
	"reflect"
	"testing"
)

// TestFastPathComparatorTellsApart holds the comparison
// TestFastPathDifferential makes (answerOf, then reflect.DeepEqual) to
// what it claims, beside TestFastPathDifferentialComparator: answers that
// differ in what a client reads compare unequal, and only what is random
// by design (request states, task ids, times, the keys of a parked call's
// questions) is let pass.
func TestFastPathComparatorTellsApart(t *testing.T) {
	const sse = "text/event-stream"
	answer := func(status int, ct, body string) fastAnswer {
		return answerOf(status, http.Header{"Content-Type": {ct}}, []byte(body))
	}
	event := func(data string) string { return "event: message\ndata: " + data + "\n\n" }
	base := answer(http.StatusOK, sse, event(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}}`))
	for _, c := range []struct {
		name  string
		other fastAnswer
		same  bool
	}{
		{"itself", base, true},
		{"members in another order", answer(http.StatusOK, sse, event(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"hi"}]}}`)), false},
		{"one letter of the result", answer(http.StatusOK, sse, event(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ho"}],"resultType":"complete"}}`)), false},
		{"the result type", answer(http.StatusOK, sse, event(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"input_required"}}`)), false},
		{"a member more", answer(http.StatusOK, sse, event(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete","isError":false}}`)), false},
		{"the id", answer(http.StatusOK, sse, event(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}}`)), false},
		{"the id's type", answer(http.StatusOK, sse, event(`{"jsonrpc":"2.0","id":"1","result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}}`)), false},
		{"an event more", answer(http.StatusOK, sse, event(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`)+event(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}}`)), false},
		{"an event id", answer(http.StatusOK, sse, "id: 7\n"+event(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}}`)), false},
		{"no answer", answer(http.StatusOK, sse, ""), false},
		{"the status", answer(http.StatusAccepted, sse, event(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}}`)), false},
		{"one JSON body instead of an event", answer(http.StatusOK, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}}`), false},
		{"data that is not JSON", answer(http.StatusOK, sse, event(`{"jsonrpc":"2.0","id":1,`)), false},
	} {
		if same := reflect.DeepEqual(base, c.other); same != c.same {
			t.Errorf("%s: compared equal %v, want %v\n%s\n%s", c.name, same, c.same, dump(base), dump(c.other))
		}
	}
	// What is random by design reads the same; anything around it does not.
	state := func(s, task, when, ask string) fastAnswer {
		return answer(http.StatusOK, sse, event(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"`+s+`","inputRequests":{"q1-`+ask+`":{"method":"elicitation/create"}},"task":{"taskId":"`+task+`","createdAt":"`+when+`"}}}`))
	}
	a, b := state("abc", "t-1", "2026-01-01T00:00:00Z", "0123abcd"), state("xyz", "t-2", "2027-02-02T00:00:00Z", "89ef4567")
	if !reflect.DeepEqual(a, b) {
		t.Errorf("random states, task ids, times and question keys compared unequal:\n%s\n%s", dump(a), dump(b))
	}
	if c := answer(http.StatusOK, sse, event(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"q1-0123abcd":{"method":"elicitation/create"}},"task":{"taskId":"t-1","createdAt":"2026-01-01T00:00:00Z"}}}`)); reflect.DeepEqual(a, c) {
		t.Errorf("an answer without its requestState compared equal to one with it")
	}
	if c := state("abc", "t-1", "2026-01-01T00:00:00Z", "0123abcdX"); reflect.DeepEqual(a, c) {
		t.Errorf("a question key of another shape compared equal")
	}
}

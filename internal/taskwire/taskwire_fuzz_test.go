package taskwire

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzTaskResult reads any text as a tools/call answer and as a
// tasks/get answer: no panic, and a task is only ever made with an id and
// a status.
func FuzzTaskResult(f *testing.F) {
	for _, s := range []string{
		`{"task":{"taskId":"a","status":"working","pollInterval":1000,"ttl":300000}}`,
		`{"resultType":"task","taskId":"b","status":"working","pollIntervalMs":5,"ttlMs":60000}`,
		`{"resultType":"task","taskId":""}`, `{"task":null}`, `{"task":{"taskId":1}}`,
		`{"content":[{"type":"text","text":"x"}]}`, `{"resultType":"complete","task":{}}`,
		`{"taskId":"c","status":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":{"message":"?"}}}}`,
		`{"taskId":"d","status":"failed","error":{"code":-32000,"message":"boom"}}`,
		`{"taskId":"e","status":"completed","result":{"content":[]}}`, `null`, `[]`, ``, `{`, `{"pollInterval":-1,"status":"working"}`,
		`{"TASK":{"taskId":"f"}}`, `{"resultType":"TaSk"}`, `{"resultType":"\u0074ask","taskId":"g"}`, "{\"tas\u212a\":{\"taskId\":\"h\"}}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		st, proto, ok, err := Created(json.RawMessage(b))
		naive := bytes.Contains(bytes.ToLower(b), []byte("task")) || bytes.IndexByte(b, '\\') >= 0 || bytes.IndexFunc(b, func(r rune) bool { return r >= 0x80 }) >= 0
		if MayBe(b) != naive {
			t.Fatalf("MayBe(%q) = %v, want %v", b, !naive, naive)
		}
		if !MayBe(b) {
			// The shortcut: what it skips must be no task to the full
			// decode either.
			if p, isObj := ProbeOf(b); isObj && (p.ResultType == "task" || len(p.Task) > 0 && string(p.Task) != "null" && p.ResultType == "") {
				t.Fatalf("MayBe(%q) = false, yet the decode finds a task: %+v", b, p)
			}
		}
		if ok && err == nil && (st.TaskID == "" || st.Status == "" || proto == "") {
			t.Fatalf("a task without id, status or protocol from %q: %+v %q", b, st, proto)
		}
		if !ok && (st != nil || err != nil) {
			t.Fatalf("not a task, yet %+v %v", st, err)
		}
		if st != nil && err == nil && st.Interval() < 0 {
			t.Fatalf("negative interval from %q", b)
		}
		if st, err := Read(json.RawMessage(b)); err == nil && st.Status == "" {
			t.Fatalf("Read: no status from %q", b)
		}
	})
}

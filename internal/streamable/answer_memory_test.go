package streamable

import (
	"io"
	"strconv"
	"strings"
	"testing"
)

// eventsReader yields n copies of ev, then tail, without holding them.
type eventsReader struct {
	ev   string
	n    int
	tail string
	cur  *strings.Reader
}

func (r *eventsReader) Read(p []byte) (int, error) {
	for r.cur == nil || r.cur.Len() == 0 {
		switch {
		case r.n > 0:
			r.n--
			r.cur = strings.NewReader(r.ev)
		case r.tail != "":
			r.cur, r.tail = strings.NewReader(r.tail), ""
		default:
			return 0, io.EOF
		}
	}
	return r.cur.Read(p)
}

// Memory held for a call is bounded by the size limit whatever the server
// sends before the answer: 1,500 comment events of 60 KB (90 MB) and
// priming events with ids leave the fast path holding about the limit,
// and what it holds for a hand-over keeps the last event id go-sdk would
// resume from.
func TestFastAnswerMemoryBounded(t *testing.T) {
	const limit = 64 << 10
	answer := `data: {"jsonrpc":"2.0","id":7,"result":{"content":[]}}` + "\n\n"
	for _, c := range []struct {
		name, ev string
	}{
		{"comments", ": " + strings.Repeat("c", 60_000) + "\n\n"},
		{"other events", "event: other\ndata: " + strings.Repeat("d", 60_000) + "\n\n"},
		{"priming events", "id: e1\nretry: 5\n\n"},
	} {
		a := fastAnswer{id: 7, body: &eventsReader{ev: c.ev, n: 1500, tail: answer}, limit: limit}
		a.readSSE(limit)
		if a.result == nil {
			t.Errorf("%s: no result", c.name)
		}
		if cap(a.buf) > 4*limit {
			t.Errorf("%s: held %d bytes for a limit of %d", c.name, cap(a.buf), limit)
		}
	}
	// Handed over (a log note before the answer), the replay keeps the
	// skipped events' last id and retry.
	note := `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}` + "\n\n"
	a := fastAnswer{id: 7, body: &eventsReader{ev: "id: e1\nretry: 5\n\n: c\n\n", n: 1500, tail: "event: x\nid: e2\ndata: y\n\n" + note + answer}, limit: limit}
	a.readSSE(limit)
	if a.result != nil {
		t.Fatal("a notification before the answer was not left to go-sdk")
	}
	if got := string(a.buf[:a.pos]); got != "id: e2\nretry: 5\n\n"+note {
		t.Errorf("held for the replay: %q", got)
	}
}

// An event over the size limit, made of comment lines, is go-sdk's to
// refuse ("result was too large"): the fast path hands it over.
func TestFastAnswerEventOverLimit(t *testing.T) {
	const limit = 64 << 10
	var b strings.Builder
	for i := range 100 {
		b.WriteString(": " + strconv.Itoa(i) + strings.Repeat("c", 1000) + "\n")
	}
	b.WriteString(`data: {"jsonrpc":"2.0","id":7,"result":{"content":[]}}` + "\n\n")
	a := fastAnswer{id: 7, body: strings.NewReader(b.String()), limit: limit}
	a.readSSE(limit)
	if a.result != nil {
		t.Error("an event of 100 KB read as the answer under a 64 KiB limit")
	}
	if cap(a.buf) > 4*limit {
		t.Errorf("held %d bytes", cap(a.buf))
	}
}

package wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/order"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// sdkEvent is an event as go-sdk v1.8.0's streamable client reads it
// (mcp/event.go scanEventsLimited without a size limit).
type sdkEvent struct {
	name, id, retry, data string
}

// sdkEvents reads stream by the rules of go-sdk v1.8.0's scanEventsLimited:
// lines end at a line feed, a line of nothing but carriage returns and line
// feeds ends an event, a line without a colon is an error that ends the
// stream, data lines are trimmed of white space and joined by line feeds,
// other fields are ignored, an event with nothing set is not yielded.
func sdkEvents(stream []byte) (evs []sdkEvent, malformed bool) {
	r := bufio.NewReader(bytes.NewReader(stream))
	var (
		ev   sdkEvent
		data *bytes.Buffer
	)
	yield := func() {
		if data != nil {
			ev.data = data.String()
			data = nil
		}
		if ev != (sdkEvent{}) {
			evs = append(evs, ev)
			ev = sdkEvent{}
		}
	}
	for {
		line, err := r.ReadBytes('\n')
		eof := errors.Is(err, io.EOF)
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			yield()
			if eof {
				return evs, false
			}
			continue
		}
		before, after, found := bytes.Cut(line, []byte{':'})
		if !found {
			return evs, true
		}
		switch string(before) {
		case "event":
			ev.name = strings.TrimSpace(string(after))
		case "id":
			ev.id = strings.TrimSpace(string(after))
		case "retry":
			ev.retry = strings.TrimSpace(string(after))
		case "data":
			if data == nil {
				data = new(bytes.Buffer)
			} else {
				data.WriteByte('\n')
			}
			data.Write(bytes.TrimSpace(after))
		}
		if eof {
			yield()
			return evs, false
		}
	}
}

// sdkMessage returns the message go-sdk's client takes from ev (it skips
// events without data and events of other names), or nil.
func sdkMessage(ev sdkEvent) jsonrpc.Message {
	if ev.data == "" || ev.name != "" && ev.name != "message" {
		return nil
	}
	msg, err := jsonrpc.DecodeMessage([]byte(ev.data))
	if err != nil {
		return nil
	}
	return msg
}

// checkMarks passes stream through an sseLimit with markers, reading
// chunk bytes at a time, and checks what a reader with go-sdk's rules
// reads from it: the events of stream, in order and unchanged, with
// markers between them; a marker never last nor right before a request
// or notification; and one between a request or notification go-sdk
// takes and the first response it takes after it.
func checkMarks(t *testing.T, stream string, chunk int) {
	t.Helper()
	marks := order.New()
	s := newSSELimit(io.NopCloser(&chunkReader{data: []byte(stream), n: chunk}), 1<<20, nil, nil)
	s.marks = marks
	out, err := io.ReadAll(s)
	if err != nil {
		t.Fatal(err)
	}
	want, wantBad := sdkEvents([]byte(stream))
	got, gotBad := sdkEvents(out)
	if wantBad != gotBad {
		t.Fatalf("malformed: stream %v, passed up %v\n in %q\nout %q", wantBad, gotBad, stream, out)
	}
	var kept []sdkEvent
	for i, ev := range got {
		if m := sdkMessage(ev); m != nil && marks.IsMarker(m) {
			if i+1 >= len(got) {
				if !gotBad { // a malformed line ends go-sdk's reading
					t.Fatalf("a marker with no event after it\n in %q\nout %q", stream, out)
				}
				continue
			}
			if _, req := sdkMessage(got[i+1]).(*jsonrpc.Request); req {
				t.Fatalf("a marker before a request or notification\n in %q\nout %q", stream, out)
			}
			continue
		}
		kept = append(kept, ev)
	}
	if fmt.Sprint(kept) != fmt.Sprint(want) {
		t.Fatalf("the events read changed:\nwant %q\n got %q\n in %q\nout %q", want, kept, stream, out)
	}
	// A marker comes between a request or notification go-sdk takes
	// and the first response it takes after it.
	// (A request with a result or error member before its method, which
	// go-sdk reads as a request, is taken for an answer: left out.)
	pending := false
	for _, ev := range got {
		m := sdkMessage(ev)
		if m == nil && ev.data != "" && (ev.name == "" || ev.name == "message") {
			return // go-sdk fails the connection on data it cannot decode
		}
		switch m := m.(type) {
		case *jsonrpc.Request:
			if strings.Contains(ev.data, `"result"`) || strings.Contains(ev.data, `"error"`) {
				return
			}
			pending = !marks.IsMarker(m)
		case *jsonrpc.Response:
			if pending {
				t.Fatalf("no marker before the answer that follows a message from the server\n in %q\nout %q", stream, out)
			}
			return
		}
	}
}

// TestSSELimitMarks: markers land between events, before the stream's
// first answer that follows a message from the server, in every legal
// form of the events, read at every chunk size.
func TestSSELimitMarks(t *testing.T) {
	for _, stream := range marksSeeds {
		for chunk := 1; chunk <= len(stream)+1; chunk++ {
			checkMarks(t, stream, chunk)
		}
	}
}

const (
	seedNote   = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`
	seedAnswer = `{"jsonrpc":"2.0","id":1,"result":{}}`
)

var marksSeeds = []string{
	"data: " + seedNote + "\n\ndata: " + seedAnswer + "\n\n",
	"data: " + seedNote + "\r\n\r\nid: 5\r\nretry: 10\r\ndata: " + seedAnswer + "\r\n\r\n",
	"data: {\"jsonrpc\":\"2.0\",\ndata: \"method\":\"notifications/message\",\"params\":{}}\n\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1,\"result\":{}}\n\n",
	"data: " + seedNote + "\n\r\r\ndata: " + seedAnswer + "\n\n",
	": comment\nevent: message\ndata: " + seedNote + "\n\n: c\n\nevent: other\ndata: " + seedAnswer + "\n\ndata: " + seedAnswer,
	"\xef\xbb\xbfdata: " + seedNote + "\n\ndata: " + seedAnswer + "\n\n",
	"data: " + seedAnswer + "\n\ndata: " + seedNote + "\n\ndata: " + seedAnswer + "\n\n",
	"id: 1\ndata:\n\ndata: " + seedNote + "\n\nbad line\n\ndata: " + seedAnswer + "\n\n",
}

func FuzzSSELimitMarks(f *testing.F) {
	for _, s := range marksSeeds {
		f.Add(s, 1)
		f.Add(s, 7)
	}
	f.Fuzz(func(t *testing.T, stream string, chunk int) {
		checkMarks(t, stream, 1+abs(chunk)%64)
	})
}

package wire

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// readLimitedSSE passes stream through an sseLimit reading chunk bytes at a
// time, and returns what came out and the oversized messages reported.
func readLimitedSSE(t *testing.T, stream string, limit int, reqID func() (jsonrpc.ID, bool), chunk int) (string, []string) {
	t.Helper()
	var reports []string
	s := newSSELimit(io.NopCloser(&chunkReader{data: []byte(stream), n: chunk}), limit, reqID, func(size int64, failed bool) {
		if failed {
			reports = append(reports, "failed")
		} else {
			reports = append(reports, "dropped")
		}
	})
	out, err := io.ReadAll(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), reports
}

// chunkReader returns data n bytes per Read.
type chunkReader struct {
	data []byte
	n    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.data)
	c.data = c.data[k:]
	return k, nil
}

func bigText(n int) string { return strings.Repeat("x", n) }

func TestSSELimit(t *testing.T) {
	small := "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n"
	after := "data: {\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}\n\n"
	tooLarge := func(id string, size int) string {
		return "data: {\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"error\":{\"code\":-32603,\"message\":\"" +
			TooLargeText(int64(size), true, 1000) + "\"}}\n\n"
	}
	idFirst := "event: message\nid: 7\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"" + bigText(5000) + "\"}]}}\n"
	idLast := "data: {\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"" + bigText(5000) + "\"}]},\"jsonrpc\":\"2.0\",\"id\":\"abc\"}\n"
	multiLine := "data: {\"jsonrpc\":\"2.0\",\n" + strings.Repeat("data: \""+bigText(100)+"\"\n", 30) + "data: \"id\":4}\n"
	notification := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"" + bigText(5000) + "\"}}\n"
	noID := "data: {\"jsonrpc\":\"2.0\",\"result\":{\"content\":\"" + bigText(5000) + "\"}}\n"
	for _, tc := range []struct {
		name    string
		in      string
		reqID   func() (jsonrpc.ID, bool)
		want    string
		reports []string
	}{
		{"within the limit", small + after, nil, small + after, nil},
		{"id first", small + idFirst + "\n" + after, nil,
			small + "event: message\nid: 7\n" + tooLarge("3", len(idFirst)) + after, []string{"failed"}},
		{"id last", idLast + "\n" + after, nil, tooLarge(`"abc"`, len(idLast)) + after, []string{"failed"}},
		{"id after many data lines", multiLine + "\n", nil, tooLarge("4", len(multiLine)), []string{"failed"}},
		{"a notification is dropped", notification + "\n" + after, func() (jsonrpc.ID, bool) { return mustID(t, 5), true },
			after, []string{"dropped"}},
		{"no id on a GET stream", noID + "\n" + after, nil, after, []string{"dropped"}},
		{"no id on a POST stream: the POST's call", noID + "\n" + after, func() (jsonrpc.ID, bool) { return mustID(t, 5), true },
			tooLarge("5", len(noID)) + after, []string{"failed"}},
		{"CRLF", strings.ReplaceAll(idFirst, "\n", "\r\n") + "\r\n" + after, nil,
			"event: message\r\nid: 7\r\n" + tooLarge("3", len(idFirst)+3) + after, []string{"failed"}},
		{"unterminated at the end", idFirst, nil, "event: message\nid: 7\n" + tooLarge("3", len(idFirst)), []string{"failed"}},
	} {
		for _, chunk := range []int{1, 7, 1 << 20} {
			got, reports := readLimitedSSE(t, tc.in, 1000, tc.reqID, chunk)
			if got != tc.want {
				t.Errorf("%s, chunks of %d:\n got %q\nwant %q", tc.name, chunk, got, tc.want)
			}
			if strings.Join(reports, ",") != strings.Join(tc.reports, ",") {
				t.Errorf("%s, chunks of %d: reported %v, want %v", tc.name, chunk, reports, tc.reports)
			}
		}
	}
}

func mustID(t *testing.T, v any) jsonrpc.ID {
	t.Helper()
	if n, ok := v.(int); ok {
		v = float64(n)
	}
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// A long line (over bufio's buffer) in an event within the limit passes
// whole; the event over the limit after it holds no more than the limit.
func TestSSELimitLongLines(t *testing.T) {
	ok := "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"" + bigText(200<<10) + "\"}}\n\n"
	big := "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"t\":\"" + bigText(3<<20) + "\"}}\n\n"
	got, reports := readLimitedSSE(t, ok+big, 1<<20, nil, 1<<20)
	want := ok + "data: " + string(tooLargeResponse(mustID(t, 2), int64(len(big)-1), true, 1<<20)) + "\n\n"
	if got != want {
		t.Errorf("got %d bytes, want %d; ends %q", len(got), len(want), got[max(0, len(got)-200):])
	}
	if len(reports) != 1 || reports[0] != "failed" {
		t.Errorf("reports %v", reports)
	}
}

func FuzzSSELimit(f *testing.F) {
	f.Add("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n", 10, 3)
	f.Add("id: 1\r\nevent: message\r\ndata: {\"id\":2,\r\ndata: \"result\":{}}\r\n\r\n: c\n\n", 20, 1)
	f.Add("data: {\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"a\":\"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\"}}\n\ndata: x", 30, 5)
	f.Fuzz(func(t *testing.T, stream string, limit, chunk int) {
		limit = 1 + abs(limit)%4096
		chunk = 1 + abs(chunk)%64
		got, _ := readLimitedSSE(t, stream, limit, func() (jsonrpc.ID, bool) { return mustID(t, 1), true }, chunk)
		if len(stream) <= limit && got != stream {
			t.Fatalf("a stream within the limit changed:\n in %q\nout %q", stream, got)
		}
		// Every event handed on is within the limit, or is a replacement.
		for _, ev := range sseEvents(got) {
			if len(ev) > limit && !strings.Contains(ev, "too large") {
				t.Fatalf("an event of %d bytes over the limit %d was handed on: %q", len(ev), limit, ev)
			}
		}
	})
}

// sseEvents splits an event stream into its events' lines, without the
// blank lines that end them.
func sseEvents(stream string) []string {
	var (
		evs []string
		ev  strings.Builder
	)
	for _, line := range strings.SplitAfter(stream, "\n") {
		if line == "\n" || line == "\r\n" {
			evs = append(evs, ev.String())
			ev.Reset()
			continue
		}
		ev.WriteString(line)
	}
	return append(evs, ev.String())
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func TestJSONLimit(t *testing.T) {
	req := func(body string) *http.Request {
		r, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	call := `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"big"},"id":12}`
	big := `{"jsonrpc":"2.0","id":12,"result":{"t":"` + bigText(5000) + `"}}`
	for _, tc := range []struct {
		name   string
		length int64 // Content-Length; -1 unknown
		body   string
		want   string
	}{
		{"unknown length, within", -1, `{"jsonrpc":"2.0","id":12,"result":{}}`, `{"jsonrpc":"2.0","id":12,"result":{}}`},
		{"unknown length, over", -1, big, string(tooLargeResponse(mustID(t, 12), 1000, false, 1000))},
		{"known length, over", int64(len(big)), big, string(tooLargeResponse(mustID(t, 12), int64(len(big)), true, 1000))},
	} {
		var reported []bool
		tap := &Tap{MaxMessageBytes: 1000, OnOversized: func(_ int64, failed bool) { reported = append(reported, failed) }}
		resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
			ContentLength: tc.length, Body: io.NopCloser(&chunkReader{data: []byte(tc.body), n: 100})}
		tap.limitBody(req(call), resp)
		got, err := io.ReadAll(resp.Body)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
		}
		if over := len(tc.body) > 1000; over != (len(reported) == 1) || over && !reported[0] {
			t.Errorf("%s: reported %v", tc.name, reported)
		}
	}
}

// A body that is not a message is cut at the limit with an error.
func TestCappedBody(t *testing.T) {
	tap := &Tap{MaxMessageBytes: 1000}
	for _, tc := range []struct {
		status int
		ct     string
		n      int
	}{
		{500, "application/json", 1001},
		{200, "text/html", 5000},
		{200, "application/json", 1000}, // a GET's body: OAuth metadata
	} {
		resp := &http.Response{StatusCode: tc.status, Header: http.Header{"Content-Type": {tc.ct}},
			ContentLength: -1, Body: io.NopCloser(strings.NewReader(bigText(tc.n)))}
		r, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1/", nil)
		tap.limitBody(r, resp)
		got, err := io.ReadAll(resp.Body)
		var tl *BodyTooLargeError
		if over := tc.n > 1000; over != errors.As(err, &tl) || len(got) != min(tc.n, 1000) {
			t.Errorf("%d %s, %d bytes: read %d, %v", tc.status, tc.ct, tc.n, len(got), err)
		}
	}
}

func TestResponseID(t *testing.T) {
	for _, tc := range []struct {
		head, tail string
		id         any
		kind       msgKind
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{"content":[`, `aaa"}]}}`, 7, kindResponse},
		{`{"result":{"content":[{"type":"text","text":"`, `xx"}]},"jsonrpc":"2.0","id":"abc"}`, "abc", kindResponse},
		{`{"jsonrpc":"2.0","method":"x","id":1`, ``, nil, kindRequest},
		{`{"jsonrpc":"2.0","id":3,"params":{"x":"`, `"},"method":"ping"}`, nil, kindRequest},
		{`{"jsonrpc":"2.0","id":3,"params":{"x":"`, `"}}`, 3, kindResponse},
		{`{"id":null,"result":`, `}`, nil, kindUnknown},
		{`[1,2`, `]`, nil, kindUnknown},
	} {
		id, kind := responseID([]byte(tc.head), []byte(tc.tail))
		if kind != tc.kind || (tc.id != nil && (kind != kindResponse || id != mustID(t, tc.id))) {
			t.Errorf("responseID(%q, %q) = %v, %v; want %v, %v", tc.head, tc.tail, id, kind, tc.id, tc.kind)
		}
	}
}

func FuzzResponseID(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[`), []byte(`aaa"}]}}`))
	f.Add([]byte(`{"result":{"content":[{"type":"text","text":"`), []byte(`xx"}]},"jsonrpc":"2.0","id":"abc"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"x","id":1`), []byte(``))
	f.Fuzz(func(t *testing.T, head, tail []byte) {
		if id, kind := responseID(head, tail); kind == kindResponse && !id.IsValid() {
			t.Fatalf("a response without a valid id: %q %q", head, tail)
		}
	})
}

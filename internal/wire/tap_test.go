package wire

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/order"
)

const listRequest = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`

// listResponse answers listRequest with listAnswer.
const listResponse = `{"jsonrpc":"2.0","id":1,"result":` + listAnswer + `}`

// statuses collects what a Tap reports to OnStatus.
type statuses struct {
	mu  sync.Mutex
	got []string
}

func (s *statuses) record(method string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, method+" "+http.StatusText(status))
}

func (s *statuses) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.got, ", ")
}

// post sends body to url through rt and reads the whole response.
func post(t *testing.T, ctx context.Context, rt http.RoundTripper, url, body string) (*http.Response, []byte, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, data, nil
}

func serve(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

func TestTapJSONBody(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, listResponse)
	})
	var st statuses
	obs := NewObserver("srv", nil)
	tap := &Tap{Base: srv.Client().Transport, Observer: obs, Observe: true, OnStatus: st.record}
	_, body, err := post(t, t.Context(), tap, srv.URL, listRequest)
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != listResponse {
		t.Errorf("body changed by the tap: %s", body)
	}
	in, _, ok := obs.RawSchemas("sum")
	if !ok || !bytes.Contains(in, []byte("12345678901234567890")) {
		t.Errorf("schema not kept verbatim from a JSON body: %s, %v", in, ok)
	}
	if got := st.String(); got != "POST OK" {
		t.Errorf("statuses %q, want POST OK", got)
	}
}

func TestTapSSEBody(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, ": comment\r\nevent: message\r\nid: 1\r\ndata: "+listResponse+"\r\n\r\n")
	})
	var trace bytes.Buffer
	obs := NewObserver("srv", slog.New(slog.NewJSONHandler(&trace, &slog.HandlerOptions{Level: slog.LevelDebug})))
	tap := &Tap{Base: srv.Client().Transport, Observer: obs, Observe: true}
	if _, _, err := post(t, t.Context(), tap, srv.URL, listRequest); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := obs.RawSchemas("sum"); !ok {
		t.Error("schemas not kept from an event stream")
	}
	if out := trace.String(); !strings.Contains(out, "mcp send") || !strings.Contains(out, "mcp recv") {
		t.Errorf("trace lacks the exchange:\n%s", out)
	}
}

func TestTapSSEEventsSplitAcrossReads(t *testing.T) {
	obs := NewObserver("srv", nil)
	obs.Sent(request(t, 1, "tools/list", `{}`), nil)
	stream := "data: {\"jsonrpc\":\"2.0\",\n" + "data: \"id\":1,\"result\":" + listAnswer + "}\n\n"
	s := &sseTap{obs: obs}
	for i := range len(stream) {
		s.feed([]byte(stream[i : i+1]))
	}
	if _, _, ok := obs.RawSchemas("sum"); !ok {
		t.Error("a multi-line event read a byte at a time was not observed")
	}
}

func TestTapNotObserving(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, listResponse)
	})
	obs := NewObserver("srv", nil)
	tap := &Tap{Base: srv.Client().Transport, Observer: obs}
	if _, _, err := post(t, t.Context(), tap, srv.URL, listRequest); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := obs.RawSchemas("sum"); ok {
		t.Error("a tap with Observe unset observed the exchange")
	}
}

func TestTapRecordsRequestStatus(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		http.Error(w, "session not found", http.StatusNotFound)
	})
	var st statuses
	tap := &Tap{Base: srv.Client().Transport, Observer: NewObserver("srv", nil), Observe: true, OnStatus: st.record}

	ctx, rs := TrackRequest(t.Context())
	if rs.Status() != 0 {
		t.Fatalf("status %d before any request", rs.Status())
	}
	// A GET (go-sdk's standalone stream) is not the request's own POST.
	get, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tap.RoundTrip(get)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if rs.Status() != 0 {
		t.Errorf("a GET recorded status %d", rs.Status())
	}
	resp, _, err = post(t, ctx, tap, srv.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}`)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusNotFound || rs.Status() != http.StatusNotFound {
		t.Errorf("response %d, recorded %d; want 404 both", resp.StatusCode, rs.Status())
	}
	if got, want := st.String(), "GET Method Not Allowed, POST Not Found"; got != want {
		t.Errorf("statuses %q, want %q", got, want)
	}

	// A request that did not ask is not tracked.
	_, other := TrackRequest(t.Context())
	if _, _, err := post(t, t.Context(), tap, srv.URL, `{}`); err != nil {
		t.Fatal(err)
	}
	if other.Status() != 0 {
		t.Errorf("an untracked request recorded %d elsewhere", other.Status())
	}
}

func TestTapDialError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	ln.Close() // nothing listens there now

	tap := &Tap{Base: http.DefaultTransport.(*http.Transport).Clone(), Observer: NewObserver("srv", nil), Observe: true}
	_, _, err = post(t, t.Context(), tap, url, listRequest)
	var ns *NotSentError
	if !errors.As(err, &ns) {
		t.Fatalf("error %v is not a *NotSentError", err)
	}
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" {
		t.Errorf("the dial error is not wrapped: %v", err)
	}
}

func TestTapOtherErrorMayHaveBeenSent(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		// The request arrived; the connection breaks before an answer.
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	tap := &Tap{Base: srv.Client().Transport, Observer: NewObserver("srv", nil), Observe: true}
	_, _, err := post(t, t.Context(), tap, srv.URL, listRequest)
	if err == nil {
		t.Fatal("no error from a broken connection")
	}
	var ns *NotSentError
	if errors.As(err, &ns) {
		t.Errorf("a request the server received was marked not sent: %v", err)
	}
}

func TestIsDialError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&net.OpError{Op: "dial", Err: errors.New("refused")}, true},
		{&net.DNSError{Err: "no such host", Name: "x.invalid"}, true},
		{&net.OpError{Op: "read", Err: io.ErrUnexpectedEOF}, false},
		{io.EOF, false},
	} {
		if got := isDialError(tc.err); got != tc.want {
			t.Errorf("isDialError(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestTapTracesServerProgressLikeMarker: the protocol trace leaves out the
// markers the Tap passes up (internal/order) and no message of the
// server's, even one whose progress token looks like a marker's.
func TestTapTracesServerProgressLikeMarker(t *testing.T) {
	forged := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpadapter-order-0123456789abcdef-1","progress":1}}`
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: "+forged+"\n\ndata: "+listResponse+"\n\n")
	})
	var trace bytes.Buffer
	obs := NewObserver("srv", slog.New(slog.NewJSONHandler(&trace, &slog.HandlerOptions{Level: slog.LevelDebug})))
	marks := order.New()
	tap := &Tap{Base: srv.Client().Transport, Observer: obs, Observe: true, Marks: marks, MaxMessageBytes: 1 << 20}
	_, body, err := post(t, t.Context(), tap, srv.URL, listRequest)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(body, []byte("mcpadapter-order-")); n != 2 {
		t.Fatalf("the stream passed up has %d progress tokens like a marker's, want the server's and a marker:\n%s", n, body)
	}
	if n := strings.Count(trace.String(), "notifications/progress"); n != 1 {
		t.Errorf("the trace has %d progress notifications, want the server's alone:\n%s", n, trace.String())
	}
}

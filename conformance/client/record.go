package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/mcpadapter/mcpadapter/internal/stdio"
)

// calls records the tools/call requests the client POSTs, and how many of
// them the fast path sent (its ids start after stdio.FirstDirectID; go-sdk
// numbers its requests from 1): run.sh checks from this record that the
// fast path was used in one pass of the suite and not in the other.
var calls callRecord

type callRecord struct {
	all, fast atomic.Int64
}

// report writes the record to stderr, which the suite keeps with the
// scenario's results, as the line run.sh reads.
func (r *callRecord) report() {
	log.Printf("tools/call POSTs: %d, on the fast path: %d", r.all.Load(), r.fast.Load())
}

// recordingTransport is an http.RoundTripper that records the tools/call
// requests it carries in calls.
type recordingTransport struct{ base http.RoundTripper }

func (t recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.Body == nil || req.Body == http.NoBody {
		return t.base.RoundTrip(req)
	}
	b, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	calls.note(b)
	req = req.Clone(req.Context())
	req.Body = io.NopCloser(bytes.NewReader(b))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return t.base.RoundTrip(req)
}

// note records body if it is a tools/call.
func (r *callRecord) note(body []byte) {
	if !bytes.Contains(body, []byte(`"tools/call"`)) {
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" {
		return
	}
	r.all.Add(1)
	if n, err := strconv.ParseInt(string(msg.ID), 10, 64); err == nil && n > stdio.FirstDirectID {
		r.fast.Add(1)
	}
}

// recording returns c (nil: a client with http.DefaultTransport) with its
// transport wrapped to record tools/call requests.
func recording(c *http.Client) *http.Client {
	if c == nil {
		c = &http.Client{}
	}
	out := *c
	base := out.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	out.Transport = recordingTransport{base}
	return &out
}

//go:build !mcpadapter_nofastpath

// The comparators' own tests: they call compareOutcomes and compareHTTP,
// the functions the differential tests use, on outcomes that differ, and
// fail if a difference passes. Built with the fast path only, as the
// comparators demand that the fast path's client took it.

package mcpadapter_test

import (
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// tellApart are pairs of answers to a call that differ in what a user
// would see: the content, a number, an id the result quotes, an error's
// code, the isError flag alone.
func tellApart() []struct{ what, fast, sdk string } {
	r := func(result string) string { return `{"jsonrpc":"2.0","id":@ID@,"result":` + result + `}` }
	e := func(code string) string {
		return `{"jsonrpc":"2.0","id":@ID@,"error":{"code":` + code + `,"message":"boom"}}`
	}
	e2 := func(message string) string {
		return `{"jsonrpc":"2.0","id":@ID@,"error":{"code":-32000,"message":` + message + `}}`
	}
	return []struct{ what, fast, sdk string }{
		{"content", r(`{"content":[{"type":"text","text":"a"}]}`), r(`{"content":[{"type":"text","text":"b"}]}`)},
		{"a number", r(`{"content":[],"structuredContent":{"n":12345}}`), r(`{"content":[],"structuredContent":{"n":12346}}`)},
		{"a number in text", r(`{"content":[{"type":"text","text":"7"}]}`), r(`{"content":[{"type":"text","text":"8"}]}`)},
		{"an id quoted", r(`{"content":[{"type":"text","text":"@ID@"}]}`), r(`{"content":[{"type":"text","text":"@ID@0"}]}`)},
		{"an error code", e("-32000"), e("-32001")},
		{"isError alone", r(`{"content":[{"type":"text","text":"x"}],"isError":true}`), r(`{"content":[{"type":"text","text":"x"}]}`)},
		// What the masks of sizes and cut excerpts in errors must not hide
		// elsewhere.
		{"a size in text", r(`{"content":[{"type":"text","text":"wrote 10 bytes"}]}`), r(`{"content":[{"type":"text","text":"wrote 11 bytes"}]}`)},
		{"a size in an error", e2(`"wrote 10 bytes"`), e2(`"wrote 11 bytes"`)},
		{"text after an id, to an ellipsis", r(`{"content":[{"type":"text","text":"{\"id\":1} paid..."}]}`), r(`{"content":[{"type":"text","text":"{\"id\":1} refunded..."}]}`)},
		{"text after a string id, to an ellipsis", r(`{"content":[{"type":"text","text":"{\"id\":\"a\"} paid..."}]}`), r(`{"content":[{"type":"text","text":"{\"id\":\"a\"} refunded..."}]}`)},
		{"an error after an id, to an ellipsis", e2(`"order \"id\":1 paid..."`), e2(`"order \"id\":1 refunded..."`)},
	}
}

// compareOutcomes fails on stdio outcomes that differ, on a client that
// did not take its path, and on requests that differ; it passes the same
// answer on both paths.
func TestDiffPairTellsApart(t *testing.T) {
	t.Parallel()
	p := newDiffPair(t, testserver.Modern.String())
	same := `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"@ID@ same"}],"structuredContent":{"n":1}}}`
	if d := compareOutcomes(p.call(t, same)); d != "" {
		t.Fatalf("the same answer compares different:\n%s", d)
	}
	for _, c := range tellApart() {
		f, s := p.one(p.fast, p.fastIDs, c.fast), p.one(p.sdk, p.sdkIDs, c.sdk)
		if d := compareOutcomes(f, s); !strings.Contains(d, "fast path: ") {
			t.Errorf("%s: the results compare equal:\n%s\n%s", c.what, describe(f), describe(s))
		}
	}
	// Paths: two clients on go-sdk's path, two on the fast path.
	if d := compareOutcomes(p.one(p.sdk, p.sdkIDs, same), p.one(p.sdk, p.sdkIDs, same)); !strings.Contains(d, "did not take the fast path") {
		t.Errorf("go-sdk's path on both sides passes: %q", d)
	}
	if d := compareOutcomes(p.one(p.fast, p.fastIDs, same), p.one(p.fast, p.fastIDs, same)); !strings.Contains(d, "did not take go-sdk's path") {
		t.Errorf("the fast path on both sides passes: %q", d)
	}
	// Requests: a 2025-11-25 client's call carries no _meta, a
	// 2026-07-28 client's carries go-sdk's; the results are the same.
	q := newDiffPair(t, testserver.Legacy.String())
	f, s := q.one(q.fast, q.fastIDs, same), p.one(p.sdk, p.sdkIDs, same)
	if d := compareOutcomes(f, s); !strings.Contains(d, "fast path sent: ") || strings.Contains(d, "fast path: ") || f.request == "" {
		t.Errorf("requests that differ compare equal, or the results differ:\n%s", d)
	}
}

// compareHTTP fails on HTTP outcomes that differ, on a client that did
// not take its path, and on requests that differ (an extra header); it
// passes the same answer on both paths.
func TestHTTPDiffPairTellsApart(t *testing.T) {
	t.Parallel()
	p := newHTTPDiffPair(t, testserver.Legacy, false)
	sse := func(answer string) testserver.HTTPScript {
		_, s := answerScripts(answer)
		return s
	}
	same := sse(`{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"@ID@ same"}],"structuredContent":{"n":1}}}`)
	if d := compareHTTP(p.call(t, same)); d != "" {
		t.Fatalf("the same answer compares different:\n%s", d)
	}
	for _, c := range tellApart() {
		f, s := p.one(p.fast, sse(c.fast)), p.one(p.sdk, sse(c.sdk))
		if d := compareHTTP(f, s); !strings.Contains(d, "fast path: result") && !strings.Contains(d, "fast path: error") {
			t.Errorf("%s: the results compare equal:\n%s", c.what, d)
		}
	}
	if d := compareHTTP(p.one(p.sdk, same), p.one(p.sdk, same)); !strings.Contains(d, "did not take the fast path") {
		t.Errorf("go-sdk's path on both sides passes: %q", d)
	}
	if d := compareHTTP(p.one(p.fast, same), p.one(p.fast, same)); !strings.Contains(d, "did not take go-sdk's path") {
		t.Errorf("the fast path on both sides passes: %q", d)
	}
	// Requests: a client on the fast path that sends one more header; and
	// one whose MaxMessageBytes lets a 100 KiB answer through.
	other, err := mcpadapter.NewClient(p.peer.URL, &mcpadapter.ClientOptions{
		Logger: quietLogger(), Timeout: httpDiffTimeout, MaxMessageBytes: 1 << 20, Headers: map[string]string{"X-Differs": "1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	f, s := p.one(other, same), p.one(p.sdk, same)
	if d := compareHTTP(f, s); !strings.Contains(d, "X-Differs") {
		t.Errorf("requests that differ compare equal:\n%s", d)
	}
	big := sse(`{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"@PAD@"}]}}`)
	big.Pad = 100 << 10
	f, s = p.one(other, big), p.one(p.sdk, big)
	if d := compareHTTP(f, s); !strings.Contains(d, "fast path: result") || f.call.res == nil || f.call.res.IsError || s.call.res == nil || !s.call.res.IsError {
		t.Errorf("a result within 1 MiB and a too-large error within 64 KiB:\n%s", d)
	}
}

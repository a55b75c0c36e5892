package gateway

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// readLimited reads what io.ReadAll(io.LimitReader(r, max+1)) reads, and
// fails as it fails, whatever the size it was told and however the
// reader hands out its bytes.
func TestReadLimited(t *testing.T) {
	errBroken := errors.New("broken")
	readers := map[string]func(string) io.Reader{
		"whole":      func(s string) io.Reader { return strings.NewReader(s) },
		"bytewise":   func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"halves":     func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
		"eof-early":  func(s string) io.Reader { return iotest.DataErrReader(strings.NewReader(s)) },
		"then-fails": func(s string) io.Reader { return io.MultiReader(strings.NewReader(s), iotest.ErrReader(errBroken)) },
	}
	for _, body := range []string{"", "x", strings.Repeat("a", 511), strings.Repeat("b", 512), strings.Repeat("c", 513), strings.Repeat("d", 3000), strings.Repeat("e", 3*readChunk+7)} {
		for _, max := range []int64{0, 1, 511, 512, 1000, 4096, readChunk, 2*readChunk + 1, 1 << 20} {
			for name, reader := range readers {
				want, wantErr := io.ReadAll(io.LimitReader(reader(body), max+1))
				for _, size := range []int64{-1, 0, 1, int64(len(body)), int64(len(body)) - 1, int64(len(body)) + 1, max, max + 1} {
					got, err := readLimited(reader(body), size, max)
					if !bytes.Equal(got, want) || !errors.Is(err, wantErr) && err != wantErr {
						t.Fatalf("%s body of %d bytes, max %d, size %d: read %d bytes, %v; want %d bytes, %v", name, len(body), max, size, len(got), err, len(want), wantErr)
					}
				}
			}
		}
	}
}

// A POST's body is read once: liftTask's reading is what the fast paths
// read (readBody), and the body stays whole for go-sdk's handler.
func TestBodyReadOnce(t *testing.T) {
	g := &Gateway{}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	g.liftTask(r)
	held, ok := r.Body.(*heldBody)
	if !ok {
		t.Fatalf("liftTask put back a %T", r.Body)
	}
	got, ok := g.readBody(r)
	if !ok || string(got) != body || &got[0] != &held.data[0] {
		t.Fatalf("readBody: %q, %v (read again: %v)", got, ok, ok && &got[0] != &held.data[0])
	}
	if rest, err := io.ReadAll(r.Body); err != nil || string(rest) != body {
		t.Fatalf("the body left for go-sdk: %q, %v", rest, err)
	}
	// Read since: read again, whole.
	r.Body = putBack([]byte(body))
	if _, err := r.Body.Read(make([]byte, 3)); err != nil {
		t.Fatal(err)
	}
	got, ok = g.readBody(r)
	if !ok || string(got) != body[3:] {
		t.Fatalf("readBody of a body read in part: %q, %v", got, ok)
	}
}

// A client's Content-Length is only its word: a POST that claims the
// largest body the gateway takes and sends a few bytes costs the gateway
// about what it sent, not the body it claimed (the slow path's reading
// of it too).
func TestBodyClaimedLengthCostsNothing(t *testing.T) {
	_, u := startGateway(t, []Server{{Name: "s", Target: testserver.New(testserver.Options{})}}, nil)
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	const posts = 16
	const sent = `{"jsonrpc":"2.0",`
	claimed := int64(DefaultMaxRequestBytes)
	post := func(version string) error {
		conn, err := net.DialTimeout("tcp", pu.Host, 10*time.Second)
		if err != nil {
			return err
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		req := fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
			"Mcp-Protocol-Version: %s\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\nContent-Length: %d\r\n\r\n%s", pu.Host, version, claimed, sent)
		if _, err := io.WriteString(conn, req); err != nil {
			return err
		}
		// The client stops mid-body.
		if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
			return err
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}
	for _, version := range []string{modernVersion, v1125} {
		if err := post(version); err != nil { // warm up
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range posts {
			if err := post(version); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		per := int64(after.TotalAlloc-before.TotalAlloc) / posts
		t.Logf("%s: %d bytes allocated per POST", version, per)
		if per > claimed/4 {
			t.Errorf("at %s, a POST that claims %d bytes and sends %d made the process allocate %d bytes", version, claimed, len(sent), per)
		}
	}
}

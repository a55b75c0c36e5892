package sdkerr

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSDKErrorWording pins the go-sdk errors that this package recognises
// by their text. If a go-sdk upgrade changes their wording or code, this
// test fails, rather than retry behaviour changing silently.
func TestSDKErrorWording(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	t.Run("client is closing", func(t *testing.T) {
		srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ss.Close()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		_ = cs.Close()
		_, err = cs.ListTools(ctx, nil)
		if err == nil {
			t.Fatal("ListTools on a closed session succeeded")
		}
		if !WasNotSent(err) {
			t.Fatalf("go-sdk's error for a request on a closed session is no longer recognised as not sent: %v", err)
		}
		if d := fmt.Errorf("a later round: %w", &DeliveredError{Err: err}); WasNotSent(d) {
			t.Fatalf("a request the server had: %v taken for one never sent", d)
		}
		if IsServerError(err) {
			t.Fatalf("IsServerError(%v) = true", err)
		}
	})

	t.Run("rejected by transport", func(t *testing.T) {
		srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
		var failing atomic.Bool
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if failing.Load() && r.Method == http.MethodPost {
				http.Error(w, "overloaded", http.StatusServiceUnavailable)
				return
			}
			h.ServeHTTP(w, r)
		}))
		defer hs.Close()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		failing.Store(true)
		_, err = cs.ListTools(ctx, nil)
		var we *jsonrpc.Error
		if !errors.As(err, &we) {
			t.Fatalf("a 503 answer is no longer a *jsonrpc.Error: %v", err)
		}
		if !isRejected(we) {
			t.Fatalf("go-sdk's error for a 503 is code %d %q, want %d %q", we.Code, we.Message, codeRejected, rejected)
		}
		if IsServerError(err) {
			t.Fatalf("IsServerError(%v) = true for an HTTP failure", err)
		}
	})
	t.Run("unrecognized content type", func(t *testing.T) {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := testserver.New(testserver.Options{}).Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ss.Close()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "hologram"})
		if err == nil {
			t.Fatal("go-sdk now decodes a block of an unknown type: engine.ReplyOf's lenient decoding may be unneeded")
		}
		if !IsUnknownContent(err) {
			t.Fatalf("go-sdk's error for a block of an unknown type is no longer recognised: %v", err)
		}
	})
}

package mcpadapter_test

import (
	"errors"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestCallIdentityHeaderTwiceRefused: Headers that name one header twice
// in different cases ("x-tenant" and "X-Tenant") are refused with an
// *IdentityError: which value reached the server would change from one
// request to the next (the handshake of one tenant, a call of another).
func TestCallIdentityHeaderTwiceRefused(t *testing.T) {
	url := testserver.ServeStreamable(t, testserver.New(testserver.Options{}), testserver.Stateless())
	c, err := mcpadapter.NewClient(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	id := &mcpadapter.CallIdentity{Principal: "alice", Headers: map[string]string{"x-tenant": "acme", "X-Tenant": "globex"}}
	_, err = c.CallTool(mcpadapter.WithCallIdentity(testCtx(t), id), "headers", nil, nil)
	var ie *mcpadapter.IdentityError
	if !errors.As(err, &ie) || ie.Principal != "alice" {
		t.Errorf("a header named twice: %v, want an *IdentityError", err)
	}
}

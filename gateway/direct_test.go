package gateway

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDirectCallsFollowRegistry: the tools the fast path calls directly
// (catalog.isRegistered) are never ones go-sdk's registry has lost, even
// while a reload takes out tools whose new definitions go-sdk refuses: a
// direct call of one is then answered as go-sdk answers it (unknown
// tool), not relayed to its server.
func TestDirectCallsFollowRegistry(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "up", Era: testserver.Modern}), testserver.Stateless())
	type look struct{ registered, inRegistry bool }
	var g *Gateway
	var at *look // a_tool, when b_tool was left out
	opts := &Options{Logger: quietLogger(t), OnEvent: func(e Event) {
		if g != nil && e.Kind == ServerProblem && e.Err != nil && strings.Contains(e.Err.Error(), `"b_tool" left out`) {
			at = &look{g.cat.isRegistered("a_tool"), registryHas(t, g, "a_tool")}
		}
	}}
	var err error
	if g, err = New([]Server{{Name: "up", Target: up.URL}}, opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	def := func(name, typ string) *mcp.Tool {
		return &mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"` + typ + `"}`)}
	}
	g.cat.sync(map[string]*mcp.Tool{"a_tool": def("a_tool", "object"), "b_tool": def("b_tool", "object")}, nil, nil, nil)
	if !g.cat.isRegistered("a_tool") || !registryHas(t, g, "a_tool") {
		t.Fatal("a_tool was not registered")
	}
	// go-sdk refuses a tool whose input is not an object: a_tool, then
	// b_tool, are taken out of its registry.
	g.cat.sync(map[string]*mcp.Tool{"a_tool": def("a_tool", "array"), "b_tool": def("b_tool", "array")}, nil, nil, nil)
	switch {
	case at == nil:
		t.Fatal("b_tool was not left out")
	case at.inRegistry:
		t.Fatal("go-sdk's registry held a_tool when b_tool was left out")
	case at.registered:
		t.Error("the fast path took a_tool for registered after go-sdk's registry lost it")
	}
	if g.cat.isRegistered("a_tool") || g.cat.isRegistered("b_tool") {
		t.Error("tools left out are registered for the fast path")
	}
}

// registryHas reports whether go-sdk's registry of g's server holds the
// tool name, as a client listing the tools learns.
func registryHas(t *testing.T, g *Gateway, name string) bool {
	t.Helper()
	ctx := testCtx(t, 10*time.Second)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := g.server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "probe"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(res.Tools, func(tl *mcp.Tool) bool { return tl.Name == name })
}

package wire

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestObservedTransport(t *testing.T) {
	ctx := t.Context()
	ct, st := mcp.NewInMemoryTransports()
	obs := NewObserver("srv", nil)
	client, err := (&ObservedTransport{Inner: ct, Observer: obs}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := st.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()

	req := request(t, 1, "tools/list", `{}`)
	if err := client.Write(ctx, req); err != nil {
		t.Fatal(err)
	}
	got, err := server.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := got.(*jsonrpc.Request); !ok || r.Method != "tools/list" {
		t.Fatalf("server read %#v", got)
	}
	if err := server.Write(ctx, response(req, listAnswer)); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Read(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := obs.RawSchemas("sum"); !ok {
		t.Error("the observer did not see the tools/list exchange")
	}
}

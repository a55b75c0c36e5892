//lint:file-ignore SA1019 a handshake-era client's roots capability, deprecated in 2026-07-28, is kept as it came

package gateway

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// initializeParamsJSON encodes p as go-sdk writes initialize params on the
// wire, so that a replica that replays them gets the capabilities the
// client sent: a roots capability only when the client declared one.
// (encoding/json writes ClientCapabilities.Roots, a struct, always:
// "roots":{} for a client without roots, which go-sdk reads back as a
// client that has them.)
func initializeParamsJSON(p *mcp.InitializeParams) ([]byte, error) {
	type wireCaps struct {
		*mcp.ClientCapabilities
		Roots *mcp.RootCapabilities `json:"roots,omitempty"`
	}
	type wireParams struct {
		*mcp.InitializeParams
		Capabilities *wireCaps `json:"capabilities"`
	}
	out := wireParams{InitializeParams: p}
	if c := p.Capabilities; c != nil {
		roots := c.RootsV2
		if roots == nil && c.Roots.ListChanged {
			roots = &mcp.RootCapabilities{ListChanged: true}
		}
		out.Capabilities = &wireCaps{ClientCapabilities: c, Roots: roots}
	}
	return json.Marshal(out)
}

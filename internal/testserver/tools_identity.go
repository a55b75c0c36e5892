package testserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// PrincipalHeader is the HTTP header the whoami tool and the
// ResourceWhoami resource report.
const PrincipalHeader = "X-Principal"

// ResourceWhoami, added by Options.WhoamiResource, reads as
// "whoami <X-Principal header> read <n>", n counting its reads.
const ResourceWhoami = "test://whoami"

// Whoami is the structured output of the whoami tool: who called, as the
// server saw it.
type Whoami struct {
	// Principal is the request's X-Principal header ("" over stdio and
	// in-process).
	Principal string `json:"principal"`
	// Meta is the request's _meta, without the progress token.
	Meta map[string]any `json:"meta,omitempty"`
}

// LongTextIn is the input of the long_text tool.
type LongTextIn struct {
	// Bytes is how many bytes of text to return (at most 64 MiB).
	Bytes int `json:"bytes"`
	// Unit is the text repeated (and cut to Bytes at a rune boundary);
	// empty means "abcdefghij".
	Unit string `json:"unit,omitempty"`
}

// addIdentityTools registers whoami and long_text.
func addIdentityTools(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "Say who called: the X-Principal header and the request's _meta."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, Whoami, error) {
			var w Whoami
			if h := requestHeader(req); h != nil {
				w.Principal = h.Get(PrincipalHeader)
			}
			for k, v := range req.Params.Meta {
				if k == "progressToken" {
					continue
				}
				if w.Meta == nil {
					w.Meta = make(map[string]any)
				}
				w.Meta[k] = v
			}
			data, err := json.Marshal(w)
			if err != nil {
				return nil, Whoami{}, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{text(string(data))}}, w, nil
		})

	mcp.AddTool(srv, &mcp.Tool{Name: "long_text", Description: "Return bytes bytes of text: unit repeated."},
		func(_ context.Context, _ *mcp.CallToolRequest, in LongTextIn) (*mcp.CallToolResult, any, error) {
			if in.Bytes < 0 || in.Bytes > 64<<20 {
				return nil, nil, fmt.Errorf("bytes %d out of range [0, 64 MiB]", in.Bytes)
			}
			unit := in.Unit
			if unit == "" {
				unit = "abcdefghij"
			}
			s := strings.Repeat(unit, in.Bytes/len(unit)+1)[:in.Bytes]
			return &mcp.CallToolResult{Content: []mcp.Content{text(strings.ToValidUTF8(s, ""))}}, nil, nil
		})
}

// addWhoamiResource adds ResourceWhoami.
func addWhoamiResource(srv *mcp.Server, st *State) {
	srv.AddResource(&mcp.Resource{URI: ResourceWhoami, Name: "whoami", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			who := ""
			if h := requestHeader(req); h != nil {
				who = h.Get(PrincipalHeader)
			}
			n := st.recordRead(ResourceWhoami)
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: ResourceWhoami, MIMEType: "text/plain", Text: fmt.Sprintf("whoami %s read %d", who, n)},
			}}, nil
		})
}

package testserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BookingSchema is the form the book tool asks for.
const BookingSchema = `{"type":"object","properties":{"guests":{"type":"integer","minimum":1,"maximum":12,"description":"How many people"},"seating":{"type":"string","enum":["inside","terrace"],"default":"inside"}},"required":["guests"]}`

// LoginURL is the address the url_login tool sends the user to.
const LoginURL = "https://auth.example.com/login?session=test"

// BookIn is the input of the book tool.
type BookIn struct {
	Date string `json:"date"`
}

// addElicitTools registers tools that ask the user questions. They return
// input requests (2026-07-28 multi-round trip); for handshake-era clients
// go-sdk turns these into elicitation/create requests during the call.
//
//   - book: one form question; answers "Booked ..." / "declined" / "cancelled".
//   - survey: two rounds, a name then a confirmation, carried in requestState.
//   - url_login: fails with -32042 (URL elicitation required) on every
//     other call, succeeds on the next one.
func addElicitTools(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{Name: "book", Description: "Book a table; asks how many guests."},
		func(_ context.Context, req *mcp.CallToolRequest, in BookIn) (*mcp.CallToolResult, any, error) {
			resp, ok := req.Params.InputResponses["booking"]
			if !ok {
				var schema map[string]any
				_ = json.Unmarshal([]byte(BookingSchema), &schema)
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{"booking": &mcp.ElicitParams{Mode: "form", Message: "How many guests on " + in.Date + "?", RequestedSchema: schema}},
					RequestState:  "book:" + in.Date,
				}, nil, nil
			}
			er, _ := resp.(*mcp.ElicitResult)
			switch {
			case er == nil:
				return nil, nil, fmt.Errorf("booking: unexpected response %T", resp)
			case er.Action == "accept":
				return textResult(fmt.Sprintf("Booked %v guests (%v) on %s", er.Content["guests"], er.Content["seating"], in.Date)), nil, nil
			default:
				return textResult("Booking " + er.Action + "d"), nil, nil
			}
		})

	mcp.AddTool(srv, &mcp.Tool{Name: "survey", Description: "Ask two questions in two rounds."}, survey)

	var logins atomic.Int64
	mcp.AddTool(srv, &mcp.Tool{Name: "url_login", Description: "Needs the user to sign in at a URL first."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			if logins.Add(1)%2 == 1 {
				return nil, nil, mcp.URLElicitationRequiredError([]*mcp.ElicitParams{{Mode: "url", Message: "Sign in to continue", URL: LoginURL, ElicitationID: "login-1"}})
			}
			return textResult("signed in"), nil, nil
		})
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

var (
	nameForm    = map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []any{"name"}}
	confirmForm = map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}, "required": []any{"ok"}}
)

// survey asks for a name, then for a confirmation. With a 2026-07-28
// client it uses two input_required rounds; with a handshake-era client it
// sends two elicitation/create requests during the call (go-sdk's own
// translation of input requests for old clients does only one round).
func survey(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	if ip := req.Session.InitializeParams(); ip != nil && ip.ProtocolVersion < ModernVersion {
		name, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: "Your name?", RequestedSchema: nameForm})
		if err != nil {
			return nil, nil, err
		}
		if name.Action != "accept" {
			return textResult("no name given"), nil, nil
		}
		ok, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: fmt.Sprintf("Confirm %v?", name.Content["name"]), RequestedSchema: confirmForm})
		if err != nil {
			return nil, nil, err
		}
		return textResult(fmt.Sprintf("%v confirmed=%v", name.Content["name"], ok.Content["ok"])), nil, nil
	}
	p := req.Params
	if name, ok := p.InputResponses["name"].(*mcp.ElicitResult); ok && p.RequestState == "round1" {
		if name.Action != "accept" {
			return textResult("no name given"), nil, nil
		}
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{Mode: "form", Message: fmt.Sprintf("Confirm %v?", name.Content["name"]), RequestedSchema: confirmForm}},
			RequestState:  "round2:" + fmt.Sprint(name.Content["name"]),
		}, nil, nil
	}
	if c, ok := p.InputResponses["confirm"].(*mcp.ElicitResult); ok && len(p.RequestState) > 7 {
		return textResult(fmt.Sprintf("%s confirmed=%v", p.RequestState[7:], c.Content["ok"])), nil, nil
	}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{Mode: "form", Message: "Your name?", RequestedSchema: nameForm}},
		RequestState:  "round1",
	}, nil, nil
}

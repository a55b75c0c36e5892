package inputwire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxShed is how many times in a row a call is sent again when a
// 2026-07-28 server answers input_required with no questions (load
// shedding).
const MaxShed = 3

// MaxAutoRounds is how many rounds of one call the client answers by
// itself (sampling, roots) before it gives up, as go-sdk's own
// multi-round-trip loop does.
const MaxAutoRounds = 10

// ShedWait is the wait before the shed-th retry of a call the server shed.
func ShedWait(shed int) time.Duration { return time.Duration(100*shed) * time.Millisecond }

// Sleep waits d, or until ctx ends (its cause).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Keys returns the keys of a round's input requests, sorted.
func Keys(m mcp.InputRequestMap) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// URLElicitations returns the elicitations of a -32042 (URL elicitation
// required) error's data, each with a key (its elicitationId, or
// url-N), or none when the data holds none or is not a list of
// elicitations (a null among them included).
func URLElicitations(data json.RawMessage) (keys []string, elicitations []*mcp.ElicitParams) {
	var d struct {
		Elicitations []*mcp.ElicitParams `json:"elicitations"`
	}
	if json.Unmarshal(data, &d) != nil || slices.Contains(d.Elicitations, nil) {
		return nil, nil
	}
	for i, e := range d.Elicitations {
		key := e.ElicitationID
		if key == "" {
			key = fmt.Sprintf("url-%d", i+1)
		}
		keys = append(keys, key)
	}
	return keys, d.Elicitations
}

// WebPage checks a URL a server asks the user to visit. An application
// shows it as a link, so only a web page (http or https, with a host) is
// put to the user: never a javascript:, file: or data: URL. "" is fine
// (no URL).
func WebPage(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		scheme, _, _ := strings.Cut(raw, ":")
		return fmt.Errorf("a %q URL, which is not a web page (http or https with a host)", scheme)
	}
	return nil
}

// SamplingBase is p for a SamplingHandler, as go-sdk gives a sampling
// request to its CreateMessageHandler: a message of several content
// blocks cannot be given; tools are left out. A null message (a server's
// "messages":[null]) is an error, as is a nil p.
//
//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
func SamplingBase(p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageParams, error) {
	if p == nil {
		return nil, errors.New("the server's sampling request has no parameters")
	}
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	msgs := make([]*mcp.SamplingMessage, 0, len(p.Messages))
	for i, m := range p.Messages {
		if m == nil {
			return nil, fmt.Errorf("the server's sampling request has a null message (messages[%d])", i)
		}
		if len(m.Content) > 1 {
			return nil, fmt.Errorf("the server's sampling request has a message of %d content blocks, which SamplingHandler cannot be given", len(m.Content))
		}
		var content mcp.Content
		if len(m.Content) > 0 {
			content = m.Content[0]
		}
		//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
		msgs = append(msgs, &mcp.SamplingMessage{Content: content, Role: m.Role})
	}
	//lint:ignore SA1019 roots and sampling are deprecated in 2026-07-28 but servers may still ask for them in a round
	return &mcp.CreateMessageParams{Meta: p.Meta, IncludeContext: p.IncludeContext, MaxTokens: p.MaxTokens, Messages: msgs,
		Metadata: p.Metadata, ModelPreferences: p.ModelPreferences, StopSequences: p.StopSequences, SystemPrompt: p.SystemPrompt,
		Temperature: p.Temperature}, nil
}

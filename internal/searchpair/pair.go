package searchpair

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The pair's definitions: constants, so they are byte for byte the same on
// every turn and in every process.
const (
	SearchDescription = "Search the catalog of available tools. Give a few words saying what you want to do; " +
		"the best matching tools come back with their names, descriptions and input schemas. " +
		"Then call one with call_tool."
	SearchSchema = `{"type":"object","properties":{"query":{"type":"string","description":"What you want to do, in a few words."},` +
		`"limit":{"type":"integer","minimum":1,"maximum":20,"description":"How many tools to return (default 5)."}},"required":["query"]}`
	CallDescription = "Call a tool found with search_tools, by its exact name, with arguments that follow its input schema."
	CallSchema      = `{"type":"object","properties":{"name":{"type":"string","description":"The tool's name, as search_tools gave it."},` +
		`"arguments":{"type":"object","description":"The tool's arguments, following its input schema."}},"required":["name","arguments"]}`
)

// MaxLimit bounds the tools one search_tools call returns; DefaultLimit
// is how many it returns when neither the model nor the settings say.
const (
	MaxLimit     = 20
	DefaultLimit = 5
)

// DecodeObject decodes a JSON object of arguments (nil or empty: {}).
func DecodeObject(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("arguments are not a JSON object of the right shape: %w", err)
	}
	return nil
}

// A Match is one tool in search_tools' answer.
type Match struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Answer is the text of search_tools' answer listing matches, best first
// (each description cut to its first line); fits says whether the best
// of them plausibly does what was asked, and a note says so when not.
func Answer(matches []Match, fits bool) (string, error) {
	out := struct {
		Note  string  `json:"note,omitempty"`
		Tools []Match `json:"tools"`
	}{}
	if !fits {
		out.Note = "No tool fits this well: these are the closest, matching little of what you asked. " +
			"Call one only if its description shows it does what you want; otherwise search with other words, or tell the user no tool can do it."
	}
	for _, m := range matches {
		if !json.Valid(m.InputSchema) {
			m.InputSchema = json.RawMessage("null") // never from a server: go-sdk decoded it
		}
		m.Description = OneLine(m.Description)
		out.Tools = append(out.Tools, m)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("search_tools: %w", err)
	}
	return string(b), nil
}

// NoMatch is search_tools' answer when nothing matches query, in a
// catalog of n tools from servers.
func NoMatch(query string, n int, servers []string) string {
	names := slices.Clone(servers)
	slices.Sort(names)
	names = slices.Compact(names)
	return fmt.Sprintf("No tool matches %q; try other words. The catalog has %d tools from %s.", query, n, strings.Join(names, ", "))
}

// Unknown is call_tool's refusal of a name no tool has, naming the
// closest names.
func Unknown(name string, closest []string) string {
	msg := fmt.Sprintf("call_tool: there is no tool named %q; use search_tools to find one", name)
	if len(closest) > 0 {
		msg += " (closest names: " + strings.Join(closest, ", ") + ")"
	}
	return msg
}

// NotObject reports whether args is neither empty, null nor a JSON
// object: arguments call_tool refuses.
func NotObject(args json.RawMessage) bool {
	a := bytes.TrimSpace(args)
	return len(a) > 0 && a[0] != '{' && !bytes.Equal(a, []byte("null"))
}

// OneLine returns the first line of s, at most 200 bytes of it.
func OneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "..."
	}
	return s
}

// maxNamesInRemoved bounds the tool names RemovedText lists.
const maxNamesInRemoved = 40

// RemovedText is the text of the error result for a call to tool, which
// server removed; names are the server's tools now, each shown with
// prefix, sorted, at most 40 of them. It sorts names.
func RemovedText(tool, server, prefix string, names []string) string {
	slices.Sort(names)
	var b strings.Builder
	fmt.Fprintf(&b, "Tool %q was removed by server %q", tool, server)
	if len(names) == 0 {
		b.WriteString("; it has no tools now.")
		return b.String()
	}
	b.WriteString("; its tools now are: ")
	for i, n := range names {
		if i == maxNamesInRemoved {
			fmt.Fprintf(&b, ", and %d more", len(names)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(prefix + n)
	}
	b.WriteString(".")
	return b.String()
}

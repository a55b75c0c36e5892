package trust

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/config"
)

// maxValue is how much of one value Summary shows.
const maxValue = 300

// Summary says what a config document would make the CLI do, as written
// (no variable is expanded, nothing is read): for each server, the
// command it would run, with its arguments, working directory and
// environment, or the URL it would contact and the headers it would
// send; its auth (the authorization servers it names, the files it
// would read, the commands it would run to get tokens); the tools it
// would send the model's arguments to unchecked (skipArgumentCheck);
// and then every
// environment variable the document would expand. Every value is quoted
// with control and formatting characters escaped, so that a document
// cannot hide a line from the reader with terminal escapes; a long value
// is cut, saying so. Members are shown in document order, duplicates too.
// It fails only for a document that is not a JSON object.
func Summary(data []byte) (string, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	top, err := members(data)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	found := false
	for _, t := range top {
		if t.key != "mcpServers" && t.key != "servers" {
			continue
		}
		found = true
		servers, err := members(t.val)
		if err != nil {
			fmt.Fprintf(&b, "  %s: not an object\n", t.key)
			continue
		}
		for _, s := range servers {
			server(&b, s)
		}
	}
	if !found {
		b.WriteString("  (no \"mcpServers\" member)\n")
	}
	vars := variables(data)
	if len(vars) > 0 {
		fmt.Fprintf(&b, "  environment variables it expands: %s\n", strings.Join(vars, ", "))
	} else {
		b.WriteString("  environment variables it expands: none\n")
	}
	return b.String(), nil
}

// server writes what one server entry would do.
func server(b *strings.Builder, s member) {
	fmt.Fprintf(b, "  server %s:\n", quote(s.key))
	fields, err := members(s.val)
	if err != nil {
		fmt.Fprintf(b, "    (not an object: %s)\n", quote(string(s.val)))
		return
	}
	for _, f := range fields {
		switch f.key {
		case "disabled":
			if string(f.val) == "true" {
				b.WriteString("    disabled (not started while it says so)\n")
			}
		case "command":
			fmt.Fprintf(b, "    runs the command %s\n", value(f.val))
		case "args":
			fmt.Fprintf(b, "    with the arguments %s\n", list(f.val))
		case "cwd":
			fmt.Fprintf(b, "    in the directory %s\n", value(f.val))
		case "env":
			fmt.Fprintf(b, "    with the environment %s\n", object(f.val))
		case "inheritEnv":
			fmt.Fprintf(b, "    passing on these variables of your environment: %s\n", list(f.val))
		case "url":
			fmt.Fprintf(b, "    contacts %s\n", value(f.val))
		case "headers":
			fmt.Fprintf(b, "    sending the headers %s\n", object(f.val))
		case "auth":
			auth(b, f.val)
		case "skipArgumentCheck":
			if string(f.val) == "true" {
				b.WriteString("    sends the model's arguments to its tools unchecked (skipArgumentCheck)\n")
			}
		case "tools":
			unchecked(b, f.val)
		}
	}
}

// unchecked writes which tools of a "tools" member get the model's
// arguments unchecked.
func unchecked(b *strings.Builder, raw json.RawMessage) {
	tools, err := members(raw)
	if err != nil {
		return // another program's "tools" member: not this one's transforms
	}
	for _, t := range tools {
		fields, err := members(t.val)
		if err != nil {
			continue
		}
		for _, f := range fields {
			if f.key == "skipArgumentCheck" && string(f.val) == "true" {
				fmt.Fprintf(b, "    sends the model's arguments to its tool %s unchecked (skipArgumentCheck)\n", quote(t.key))
			}
		}
	}
}

// auth writes what an auth member would do.
func auth(b *strings.Builder, raw json.RawMessage) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if strings.EqualFold(s, "oauth") {
			b.WriteString("    signs in with OAuth (the authorization server the server names)\n")
		} else {
			fmt.Fprintf(b, "    sends the bearer token %s\n", secretValue(raw))
		}
		return
	}
	fields, err := members(raw)
	if err != nil {
		fmt.Fprintf(b, "    auth %s\n", value(raw))
		return
	}
	typ := "oauth"
	for _, f := range fields {
		if f.key == "type" {
			_ = json.Unmarshal(f.val, &typ)
		}
	}
	fmt.Fprintf(b, "    authenticates with %s\n", quote(typ))
	for _, f := range fields {
		switch {
		case f.key == "type":
		case f.key == "idTokenCommand":
			fmt.Fprintf(b, "      runs the command %s to get an ID token\n", list(f.val))
		case strings.HasSuffix(f.key, "File"):
			fmt.Fprintf(b, "      reads the file %s (%s)\n", value(f.val), f.key)
		case strings.Contains(strings.ToLower(f.key), "secret"):
			fmt.Fprintf(b, "      %s %s\n", f.key, secretValue(f.val))
		default:
			fmt.Fprintf(b, "      %s %s\n", f.key, value(f.val))
		}
	}
}

// member is one member of a JSON object, in document order.
type member struct {
	key string
	val json.RawMessage
}

// members returns the members of the JSON object data, in order,
// duplicates included.
func members(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not valid JSON: %w", err)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("not valid JSON: %w", err)
		}
		out = append(out, member{key, v})
	}
	return out, nil
}

// value shows one JSON value: a string quoted, anything else as JSON.
func value(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return quote(s)
	}
	return quote(string(raw))
}

// secretValue shows a value that may be a secret: its variables as
// written, a literal secret only as "(a literal value)".
func secretValue(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil && !strings.Contains(s, "${") {
		return "(a literal value, not shown)"
	}
	return value(raw)
}

// list shows a JSON array of strings as quoted words.
func list(raw json.RawMessage) string {
	var l []json.RawMessage
	if json.Unmarshal(raw, &l) != nil {
		return value(raw)
	}
	parts := make([]string, len(l))
	for i, v := range l {
		parts[i] = value(v)
	}
	return strings.Join(parts, " ")
}

// object shows a JSON object as name=value pairs, in order.
func object(raw json.RawMessage) string {
	fields, err := members(raw)
	if err != nil {
		return value(raw)
	}
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = quote(f.key) + "=" + value(f.val)
	}
	return strings.Join(parts, " ")
}

// quote quotes s with everything that is not a printable character
// escaped (control characters, terminal escapes, bidirectional
// overrides), cut at maxValue bytes.
func quote(s string) string {
	more := ""
	if len(s) > maxValue {
		more = fmt.Sprintf("...(%d more bytes)", len(s)-maxValue)
		s = strings.ToValidUTF8(s[:maxValue], "")
	}
	return strconv.QuoteToGraphic(s) + more
}

// variables returns the variables every string of the JSON document data
// refers to (duplicate members included), sorted.
func variables(data []byte) []string {
	var vars []string
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		s, ok := tok.(string)
		if !ok {
			continue
		}
		for _, v := range config.Variables(s) {
			if !slices.Contains(vars, v) {
				vars = append(vars, v)
			}
		}
	}
	slices.Sort(vars)
	return vars
}

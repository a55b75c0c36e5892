package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
)

// The limit: a minimal hand-written client, what a call costs at the
// least. Requests are built by append and written at once; over stdio the
// answer is one buffered line read, over HTTP a keep-alive net/http POST
// whose body (JSON or one server-sent event) is read whole; either is
// decoded by encoding/json into a typed struct. No timeouts, no
// cancellation, no error recovery, no stray-output handling: not a usable
// client, a floor.

// limitAnswer is the decoded response to a call.
type limitAnswer struct {
	ID     int64 `json:"id"`
	Result struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// limitMeta is the _meta a 2026-07-28 request carries.
const limitMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"limit","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}`

type limitStdio struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	era  string
	seq  int64
	buf  []byte
	args []byte
}

func newLimitStdio(server string, era string, args []byte) (*limitStdio, error) {
	flags := []string{"-minimal"}
	if era == era2025 {
		flags = append(flags, "-era", "legacy")
	}
	cmd := exec.Command(server, flags...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	l := &limitStdio{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10), era: era, args: args}
	if era == era2025 {
		if _, err := l.roundTrip(`"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"limit","version":"0"}}`); err != nil {
			return nil, err
		}
		if _, err := io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
			return nil, err
		}
	} else if _, err := l.roundTrip(`"server/discover","params":{"_meta":` + limitMeta + `}`); err != nil {
		return nil, err
	}
	return l, nil
}

// roundTrip sends the request whose text after the id is rest and reads
// lines up to the response with its id.
func (l *limitStdio) roundTrip(rest string) ([]byte, error) {
	l.seq++
	l.buf = append(l.buf[:0], `{"jsonrpc":"2.0","id":`...)
	l.buf = strconv.AppendInt(l.buf, l.seq, 10)
	l.buf = append(l.buf, `,"method":`...)
	l.buf = append(l.buf, rest...)
	l.buf = append(l.buf, "}\n"...)
	if _, err := l.in.Write(l.buf); err != nil {
		return nil, err
	}
	for {
		line, err := l.out.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		if bytes.Contains(line, []byte(`"method"`)) {
			continue // a notification or a request: not ours
		}
		return line, nil
	}
}

func (l *limitStdio) call(context.Context) error {
	var line []byte
	var err error
	if l.era == era2025 {
		line, err = l.roundTrip(`"tools/call","params":{"name":"echo","arguments":` + string(l.args) + `}`)
	} else {
		line, err = l.roundTrip(`"tools/call","params":{"_meta":` + limitMeta + `,"name":"echo","arguments":` + string(l.args) + `}`)
	}
	if err != nil {
		return err
	}
	return checkAnswer(line, l.seq)
}

func (l *limitStdio) close() error {
	_ = l.in.Close()
	return l.cmd.Wait()
}

// checkAnswer decodes a response and checks it answers id with a result.
func checkAnswer(b []byte, id int64) error {
	var a limitAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		return err
	}
	if a.Error != nil {
		return fmt.Errorf("error %d: %s", a.Error.Code, a.Error.Message)
	}
	if a.ID != id || len(a.Result.Content) != 1 || a.Result.IsError {
		return fmt.Errorf("unexpected answer %s", b)
	}
	return nil
}

type limitHTTP struct {
	hc      *http.Client
	url     string
	era     string
	session string
	seq     int64
	buf     []byte
	args    []byte
}

func newLimitHTTP(hc *http.Client, url, era string, args []byte) (*limitHTTP, error) {
	l := &limitHTTP{hc: hc, url: url, era: era, args: args}
	if era == era2025 {
		if _, err := l.post("initialize", "", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"limit","version":"0"}}`, true); err != nil {
			return nil, err
		}
		if _, err := l.post("notifications/initialized", "", "", false); err != nil {
			return nil, err
		}
	} else if _, err := l.post("server/discover", "", `{"_meta":`+limitMeta+`}`, true); err != nil {
		return nil, err
	}
	return l, nil
}

// post sends one message (a call when call is set) and returns the
// response's JSON (nil for a notification).
func (l *limitHTTP) post(method, name, params string, call bool) ([]byte, error) {
	l.buf = append(l.buf[:0], `{"jsonrpc":"2.0",`...)
	if call {
		l.seq++
		l.buf = append(l.buf, `"id":`...)
		l.buf = strconv.AppendInt(l.buf, l.seq, 10)
		l.buf = append(l.buf, ',')
	}
	l.buf = append(l.buf, `"method":"`...)
	l.buf = append(l.buf, method...)
	l.buf = append(l.buf, '"')
	if params != "" {
		l.buf = append(l.buf, `,"params":`...)
		l.buf = append(l.buf, params...)
	}
	l.buf = append(l.buf, '}')
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, l.url, bytes.NewReader(l.buf))
	if err != nil {
		return nil, err
	}
	h := req.Header
	h["Content-Type"] = []string{"application/json"}
	h["Accept"] = []string{"application/json, text/event-stream"}
	if l.era == era2025 {
		if method != "initialize" {
			h["Mcp-Protocol-Version"] = []string{"2025-11-25"}
		}
	} else {
		h["Mcp-Protocol-Version"] = []string{"2026-07-28"}
		h["Mcp-Method"] = []string{method}
		if name != "" {
			h["Mcp-Name"] = []string{name}
		}
	}
	if l.session != "" {
		h["Mcp-Session-Id"] = []string{l.session}
	}
	resp, err := l.hc.Do(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s: HTTP %d: %s", method, resp.StatusCode, body)
	}
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		l.session = s
	}
	if !call {
		return nil, nil
	}
	// One server-sent event, or the JSON itself.
	for rest := body; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			return d, nil
		}
	}
	if len(body) > 0 && body[0] == '{' {
		return body, nil
	}
	return nil, errors.New(method + ": no message in the response")
}

func (l *limitHTTP) call(context.Context) error {
	var params string
	if l.era == era2025 {
		params = `{"name":"echo","arguments":` + string(l.args) + `}`
	} else {
		params = `{"_meta":` + limitMeta + `,"name":"echo","arguments":` + string(l.args) + `}`
	}
	b, err := l.post("tools/call", "echo", params, true)
	if err != nil {
		return err
	}
	return checkAnswer(b, l.seq)
}

func (l *limitHTTP) close() error {
	l.hc.CloseIdleConnections()
	return nil
}

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
)

// runFloor serves the floor of any HTTP gateway on 127.0.0.1: a net/http
// server that answers each MCP request of the measured client (both
// protocol versions) with a canned answer, reading only its id, method and
// protocol version, and no server behind it. Its CPU per call is what
// serving the HTTP request alone costs; "floor" rows show it beside the
// gateway. It prints "listening on URL" and runs until its standard input
// ends or it gets SIGTERM.
func runFloor() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	serveUntilDone(ln, http.HandlerFunc(serveFloor), false)
	return nil
}

// floorAnswers are the canned results, by method.
var floorAnswers = map[string]string{
	"server/discover": `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"resultType":"complete"}`,
	"tools/list":      `{"tools":[{"name":"echo","inputSchema":{"type":"object"}}],"resultType":"complete"}`,
	"tools/call":      `{"content":[{"type":"text","text":"hello"}],"resultType":"complete"}`,
}

func serveFloor(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodDelete {
		return
	}
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if err != nil || json.Unmarshal(body, &msg) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if len(msg.ID) == 0 {
		w.WriteHeader(http.StatusAccepted) // a notification
		return
	}
	result, ok := floorAnswers[msg.Method]
	if msg.Method == "initialize" {
		result, ok = `{"protocolVersion":"`+msg.Params.ProtocolVersion+`","capabilities":{"tools":{}},"serverInfo":{"name":"floor","version":"0"}}`, true
		w.Header().Set("Mcp-Session-Id", "floor")
	}
	if !ok {
		result = `{}`
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
}

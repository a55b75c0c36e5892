//lint:file-ignore SA1019 the lean session's capabilities hold roots, deprecated in 2026-07-28 but alive in its window

package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fastCase is one HTTP request sent to a gateway with the fast path and to
// one without it.
type fastCase struct {
	name   string
	header map[string]string // set ("" deletes) over fastHeaders
	body   string
	fast   bool // the fast path takes it
	// session: the fast path hands it to the request's go-sdk session
	// (not direct: direct.go)
	session bool
	search  bool   // to gateways with tool search (search_tools, call_tool)
	want    string // in the answer
}

const fastMeta = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"diff","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}`

// fastCall returns the body of a tools/call with id, tool name and
// arguments (JSON), and the client's _meta.
func fastCall(id, name, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":` + name + `,"arguments":` + args + `,"_meta":{` + fastMeta + `}}}`
}

// leanCall is a tools/call whose _meta holds the protocol version and meta
// (members, comma-separated).
func leanCall(id, name, args, meta string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":` + name + `,"arguments":` + args + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` + meta + `}}}`
}

func fastHeaders(name string) map[string]string {
	return map[string]string{
		"Content-Type":         "application/json",
		"Accept":               "application/json, text/event-stream",
		"Mcp-Protocol-Version": v0728,
		"Mcp-Method":           "tools/call",
		"Mcp-Name":             name,
	}
}

// fastCases are good, bad and hostile requests.
func fastCases() []fastCase {
	huge := strings.Repeat("9", 400)
	return append([]fastCase{
		{name: "echo", body: fastCall("1", `"up_echo"`, `{"text":"hello"}`), fast: true, want: `"text":"hello"`},
		{name: "string id", body: fastCall(`"abc"`, `"up_echo"`, `{"text":"hi"}`), fast: true},
		{name: "huge id", body: fastCall(huge, `"up_echo"`, `{"text":"hi"}`)},
		{name: "negative fraction id", body: fastCall("-1.5", `"up_echo"`, `{"text":"hi"}`)},
		{name: "15-digit id", body: fastCall("-999999999999999", `"up_echo"`, `{"text":"hi"}`), fast: true},
		{name: "float id", body: fastCall("1.0", `"up_echo"`, `{"text":"hi"}`)},
		{name: "exponent id", body: fastCall("1e3", `"up_echo"`, `{"text":"hi"}`)},
		{name: "minus zero id", body: fastCall("-0", `"up_echo"`, `{"text":"hi"}`), fast: true},
		{name: "zero id", body: fastCall("0", `"up_echo"`, `{"text":"hi"}`), fast: true},
		{name: "escaped id and method keys", body: strings.NewReplacer(`"id"`, `"\u0069d"`, `"method"`, `"\u006d\u0065thod"`).Replace(fastCall("70", `"up_echo"`, `{"text":"e"}`)), fast: true},
		{name: "escaped method key beside method", body: strings.Replace(fastCall("71", `"up_echo"`, `{"text":"e"}`), `"method"`, `"\u006dethod":"tools/list","method"`, 1)},
		{name: "white space around", body: " \r\n\t" + strings.ReplaceAll(fastCall("72", `"up_echo"`, `{"text":"w"}`), ":", " : ") + "\n ", fast: true},
		{name: "byte order mark", body: "\ufeff" + fastCall("73", `"up_echo"`, `{"text":"b"}`)},
		{name: "Content-Type with charset", header: map[string]string{"Content-Type": "Application/JSON; charset=utf-8"}, body: fastCall("74", `"up_echo"`, `{"text":"c"}`), fast: true},
		{name: "escaped string id", body: fastCall(`"a\u0062"`, `"up_echo"`, `{"text":"hi"}`)},
		{name: "big int id", body: fastCall("9007199254740993", `"up_echo"`, `{"text":"hi"}`)},
		{name: "null id", body: fastCall("null", `"up_echo"`, `{"text":"hi"}`)},
		{name: "object id", body: fastCall(`{"a":1}`, `"up_echo"`, `{"text":"hi"}`)},
		{name: "unicode text", body: fastCall("2", `"up_echo"`, `{"text":"h\u00e9llo \ud83d\ude00 \u0000"}`), fast: true},
		{name: "unicode name", header: map[string]string{"Mcp-Name": "up_écho"}, body: fastCall("3", `"up_écho"`, `{}`), fast: true, session: true},
		{name: "unknown tool", header: map[string]string{"Mcp-Name": "nope"}, body: fastCall("4", `"nope"`, `{}`), fast: true, session: true},
		{name: "policy denial", header: map[string]string{"Mcp-Name": "up_fail"}, body: fastCall("5", `"up_fail"`, `{"message":"x"}`), fast: true, want: `unknown tool`},
		{name: "tool error", header: map[string]string{"Mcp-Name": "up_fail_structured"}, body: fastCall("6", `"up_fail_structured"`, `{}`), fast: true},
		{name: "upstream protocol error", header: map[string]string{"Mcp-Name": "up_crash"}, body: fastCall("7", `"up_crash"`, `{}`), fast: true},
		{name: "upstream dies mid-call", header: map[string]string{"Mcp-Name": "dies_echo"}, body: fastCall("8", `"dies_echo"`, `{"text":"x"}`), fast: true},
		{name: "input_required", header: map[string]string{"Mcp-Name": "old_book"}, body: fastCall("9", `"old_book"`, `{"date":"mon"}`), fast: true, want: `"resultType":"input_required"`},
		{name: "bad arguments", body: fastCall("10", `"up_echo"`, `[1,2]`), fast: true},
		{name: "arguments string", body: fastCall("11", `"up_echo"`, `"x"`), fast: true},
		{name: "wrong argument type", body: fastCall("12", `"up_echo"`, `{"text":5}`), fast: true},
		{name: "duplicate name keys", header: map[string]string{"Mcp-Name": "up_echo"}, body: `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"nope","name":"up_echo","arguments":{"text":"d"},"_meta":{` + fastMeta + `}}}`},
		{name: "duplicate method keys", body: `{"jsonrpc":"2.0","id":14,"method":"tools/list","method":"tools/call","params":{"name":"up_echo","arguments":{"text":"d"},"_meta":{` + fastMeta + `}}}`},
		{name: "upper-case keys", body: `{"jsonrpc":"2.0","id":15,"Method":"tools/call","params":{"Name":"up_echo","arguments":{"text":"d"},"_meta":{` + fastMeta + `}}}`},
		{name: "no jsonrpc member", body: `{"id":16,"method":"tools/call","params":{"name":"up_echo","arguments":{"text":"d"},"_meta":{` + fastMeta + `}}}`},
		{name: "upper-case name key", body: `{"jsonrpc":"2.0","id":63,"method":"tools/call","params":{"Name":"up_echo","arguments":{"text":"d"},"_meta":{` + fastMeta + `}}}`},
		{name: "upper-case meta key", body: `{"jsonrpc":"2.0","id":64,"method":"tools/call","params":{"name":"up_echo","arguments":{"text":"d"},"_META":{` + fastMeta + `}}}`},
		{name: "meta null", body: `{"jsonrpc":"2.0","id":65,"method":"tools/call","params":{"name":"up_echo","arguments":{"text":"d"},"_meta":null}}`},
		{name: "name null", header: map[string]string{"Mcp-Name": ""}, body: fastCall("66", "null", `{}`)},
		{name: "duplicate meta", body: `{"jsonrpc":"2.0","id":67,"method":"tools/call","params":{"name":"up_echo","arguments":{"text":"d"},"_meta":{"progressToken":1},"_meta":{` + fastMeta + `}}}`},
		{name: "duplicate meta member", body: `{"jsonrpc":"2.0","id":68,"method":"tools/call","params":{"name":"up_echo","arguments":{"text":"d"},"_meta":{"progressToken":1,` + fastMeta + `,"progressToken":null}}}`},
		{name: "escaped progress token", body: strings.Replace(fastCall("69", `"up_echo"`, `{"text":"x"}`), `"_meta":{`, `"_meta":{"progress\u0054oken":"p",`, 1), fast: true},
		{name: "jsonrpc 1.0", body: `{"jsonrpc":"1.0","id":17,"method":"tools/call","params":{"name":"up_echo","arguments":{"text":"d"},"_meta":{` + fastMeta + `}}}`},
		{name: "trailing garbage", body: fastCall("18", `"up_echo"`, `{"text":"x"}`) + "}"},
		{name: "two messages", body: fastCall("19", `"up_echo"`, `{"text":"x"}`) + fastCall("20", `"up_echo"`, `{"text":"y"}`)},
		{name: "batch", body: "[" + fastCall("21", `"up_echo"`, `{"text":"x"}`) + "]"},
		{name: "empty batch", body: "[]"},
		{name: "empty body", body: ""},
		{name: "not json", body: "hello"},
		{name: "null", body: "null"},
		{name: "notification", body: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"up_echo","arguments":{},"_meta":{` + fastMeta + `}}}`},
		{name: "response", body: `{"jsonrpc":"2.0","id":22,"result":{}}`},
		{name: "no params", body: `{"jsonrpc":"2.0","id":23,"method":"tools/call"}`},
		{name: "null params", body: `{"jsonrpc":"2.0","id":24,"method":"tools/call","params":null}`},
		{name: "params array", body: `{"jsonrpc":"2.0","id":25,"method":"tools/call","params":[1]}`},
		{name: "name number", body: fastCall("26", `5`, `{}`)},
		{name: "no name", body: `{"jsonrpc":"2.0","id":27,"method":"tools/call","params":{"arguments":{},"_meta":{` + fastMeta + `}}}`},
		{name: "no meta", body: `{"jsonrpc":"2.0","id":28,"method":"tools/call","params":{"name":"up_echo","arguments":{"text":"x"}}}`},
		{name: "meta version differs", body: strings.Replace(fastCall("29", `"up_echo"`, `{"text":"x"}`), `"2026-07-28"`, `"2026-07-29"`, 1)},
		{name: "meta version old", body: strings.Replace(fastCall("30", `"up_echo"`, `{"text":"x"}`), `"2026-07-28"`, `"2025-11-25"`, 1)},
		{name: "meta no capabilities", body: `{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"up_echo","arguments":{"text":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, fast: true, session: true},
		{name: "meta bad client info", body: `{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"up_echo","arguments":{"text":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":5,"io.modelcontextprotocol/clientCapabilities":{}}}}`, fast: true, session: true},
		// The client's info and capabilities, read once by the fast path
		// (lean.go), as go-sdk's session reads them.
		{name: "capabilities upper-case", header: map[string]string{"Mcp-Name": "up_caps"}, body: leanCall("72", `"up_caps"`, `{}`, `"io.modelcontextprotocol/clientCapabilities":{"Elicitation":{}}`), fast: true},
		{name: "capabilities roots", header: map[string]string{"Mcp-Name": "up_caps"}, body: leanCall("73", `"up_caps"`, `{}`, `"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}}`), fast: true, want: `roots`},
		{name: "capabilities null", body: leanCall("74", `"up_echo"`, `{"text":"x"}`, `"io.modelcontextprotocol/clientCapabilities":null`), fast: true, session: true},
		{name: "capabilities array", body: leanCall("75", `"up_echo"`, `{"text":"x"}`, `"io.modelcontextprotocol/clientCapabilities":[]`), fast: true, session: true},
		{name: "capabilities mistyped", header: map[string]string{"Mcp-Name": "up_book"}, body: leanCall("76", `"up_book"`, `{"date":"mon"}`, `"io.modelcontextprotocol/clientCapabilities":{"elicitation":5}`), fast: true, session: true},
		{name: "capabilities elicitation form", header: map[string]string{"Mcp-Name": "up_book"}, body: leanCall("77", `"up_book"`, `{"date":"mon"}`, `"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"experimental":{"n":12345678901234567890}}`), fast: true, want: `"resultType":"input_required"`},
		{name: "client info null", body: leanCall("78", `"up_echo"`, `{"text":"x"}`, `"io.modelcontextprotocol/clientInfo":null,"io.modelcontextprotocol/clientCapabilities":{}`), fast: true, session: true},
		{name: "client info extra members", body: leanCall("79", `"up_echo"`, `{"text":"x"}`, `"io.modelcontextprotocol/clientInfo":{"name":"n","version":"1","x":[1]},"io.modelcontextprotocol/clientCapabilities":{}`), fast: true, want: `"text":"x"`},
		{name: "escaped version key", body: `{"jsonrpc":"2.0","id":80,"method":"tools/call","params":{"name":"up_echo","arguments":{"text":"x"},"_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, fast: true},
		{name: "other meta members", body: leanCall("81", `"up_echo"`, `{"text":"x"}`, `"io.modelcontextprotocol/clientCapabilities":{},"x-trace":{"a":[1,"\u0000"]},"":null`), fast: true, want: `"text":"x"`},
		{name: "server info named by the client", body: leanCall("82", `"up_echo"`, `{"text":"x"}`, `"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/serverInfo":{"name":"mallory"}`), fast: true},
		{name: "progress token", body: strings.Replace(fastCall("33", `"up_echo"`, `{"text":"x"}`), `"_meta":{`, `"_meta":{"progressToken":"p",`, 1), fast: true},
		{name: "log level", body: strings.Replace(fastCall("34", `"up_echo"`, `{"text":"x"}`), `"_meta":{`, `"_meta":{"io.modelcontextprotocol/logLevel":"debug",`, 1), fast: true},
		{name: "unknown request state", body: strings.Replace(fastCall("35", `"up_echo"`, `{"text":"x"}`), `"arguments"`, `"requestState":"bogus","arguments"`, 1), fast: true, session: true},
		{name: "task", body: strings.Replace(fastCall("36", `"up_echo"`, `{"text":"x"}`), `"arguments"`, `"task":{"ttl":1000},"arguments"`, 1), fast: true, session: true},
		{name: "search_tools", header: map[string]string{"Mcp-Name": "search_tools"}, body: fastCall("37", `"search_tools"`, `{"query":"echo"}`), fast: true, search: true},
		{name: "call_tool", header: map[string]string{"Mcp-Name": "call_tool"}, body: fastCall("38", `"call_tool"`, `{"name":"up_echo","arguments":{"text":"s"}}`), fast: true, search: true, want: `"text":"s"`},
		{name: "search hides the tools", body: fastCall("62", `"up_echo"`, `{"text":"x"}`), fast: true, session: true, search: true},
		{name: "other method", header: map[string]string{"Mcp-Method": "tools/list"}, body: `{"jsonrpc":"2.0","id":39,"method":"tools/list","params":{"_meta":{` + fastMeta + `}}}`},
		{name: "unknown method", header: map[string]string{"Mcp-Method": "x/y"}, body: `{"jsonrpc":"2.0","id":40,"method":"x/y","params":{"_meta":{` + fastMeta + `}}}`},
		{name: "Mcp-Name missing", header: map[string]string{"Mcp-Name": ""}, body: fastCall("41", `"up_echo"`, `{"text":"x"}`)},
		{name: "Mcp-Name differs", header: map[string]string{"Mcp-Name": "up_add"}, body: fastCall("42", `"up_echo"`, `{"text":"x"}`)},
		{name: "Mcp-Method missing", header: map[string]string{"Mcp-Method": ""}, body: fastCall("43", `"up_echo"`, `{"text":"x"}`)},
		{name: "Mcp-Method differs", header: map[string]string{"Mcp-Method": "tools/list"}, body: fastCall("44", `"up_echo"`, `{"text":"x"}`)},
		{name: "no Accept", header: map[string]string{"Accept": ""}, body: fastCall("45", `"up_echo"`, `{"text":"x"}`)},
		{name: "Accept json only", header: map[string]string{"Accept": "application/json"}, body: fastCall("46", `"up_echo"`, `{"text":"x"}`)},
		{name: "Accept any", header: map[string]string{"Accept": "*/*"}, body: fastCall("47", `"up_echo"`, `{"text":"x"}`), fast: true},
		{name: "Accept wildcards with params", header: map[string]string{"Accept": "application/*;q=0.5 , TEXT/*"}, body: fastCall("48", `"up_echo"`, `{"text":"x"}`), fast: true},
		{name: "no Content-Type", header: map[string]string{"Content-Type": ""}, body: fastCall("49", `"up_echo"`, `{"text":"x"}`)},
		{name: "Content-Type text", header: map[string]string{"Content-Type": "text/plain"}, body: fastCall("50", `"up_echo"`, `{"text":"x"}`)},
		{name: "Content-Type charset", header: map[string]string{"Content-Type": "Application/JSON; charset=utf-8"}, body: fastCall("51", `"up_echo"`, `{"text":"x"}`), fast: true},
		{name: "Content-Type broken", header: map[string]string{"Content-Type": "application/json; ="}, body: fastCall("52", `"up_echo"`, `{"text":"x"}`)},
		{name: "version header later", header: map[string]string{"Mcp-Protocol-Version": "2027-01-01"}, body: strings.Replace(fastCall("53", `"up_echo"`, `{"text":"x"}`), `"2026-07-28"`, `"2027-01-01"`, 1), fast: true, session: true},
		{name: "version header junk", header: map[string]string{"Mcp-Protocol-Version": "zzz"}, body: fastCall("54", `"up_echo"`, `{"text":"x"}`)},
		{name: "session id", header: map[string]string{"Mcp-Session-Id": "abc"}, body: fastCall("55", `"up_echo"`, `{"text":"x"}`)},
		{name: "Last-Event-ID", header: map[string]string{"Last-Event-ID": "1"}, body: fastCall("56", `"up_echo"`, `{"text":"x"}`)},
		{name: "over the size limit", body: fastCall("57", `"up_echo"`, `{"text":"`+strings.Repeat("a", 5000)+`"}`)},
		{name: "just under the size limit", body: fastCall("58", `"up_echo"`, `{"text":"`+strings.Repeat("a", 3500)+`"}`), fast: true},
		{name: "deep arguments", body: fastCall("59", `"up_echo"`, strings.Repeat(`{"a":`, 500)+"1"+strings.Repeat("}", 500))},
		{name: "whitespace around", body: " \n\t" + fastCall("60", `"up_echo"`, `{"text":"x"}`) + " \n", fast: true},
		{name: "escaped name", body: fastCall("70", `"up_ech\u006f"`, `{"text":"x"}`)},
		{name: "lone surrogate name", header: map[string]string{"Mcp-Name": "up_\xef\xbf\xbd"}, body: fastCall("71", `"up_\ud800"`, `{}`)},
		{name: "invalid utf-8 name", header: map[string]string{"Mcp-Name": "up_\xff"}, body: fastCall("61", "\"up_\xff\"", `{}`)},
		// Plain calls read as go-sdk reads them (direct.go).
		{name: "arguments null", body: fastCall("90", `"up_echo"`, `null`), fast: true},
		{name: "no arguments", header: map[string]string{"Mcp-Name": "up_caps"}, body: `{"jsonrpc":"2.0","id":91,"method":"tools/call","params":{"name":"up_caps","_meta":{` + fastMeta + `}}}`, fast: true},
		{name: "meta first", body: `{"jsonrpc":"2.0","id":92,"method":"tools/call","params":{"_meta":{` + fastMeta + `}, "arguments" : {"text":"x"} ,"name":"up_echo"}}`, fast: true, want: `"text":"x"`},
		{name: "meta number out of range", body: leanCall("93", `"up_echo"`, `{"text":"x"}`, `"io.modelcontextprotocol/clientCapabilities":{},"x-n":1e400`)},
		{name: "meta negative number out of range", body: leanCall("102", `"up_echo"`, `{"text":"x"}`, `"io.modelcontextprotocol/clientCapabilities":{"experimental":{"n":[-18e307]}}`)},
		{name: "meta long number out of range", body: leanCall("103", `"up_echo"`, `{"text":"x"}`, `"io.modelcontextprotocol/clientCapabilities":{},"x-n":`+strings.Repeat("9", 400)+`.5`)},
		{name: "meta tiny number", body: leanCall("104", `"up_echo"`, `{"text":"x"}`, `"io.modelcontextprotocol/clientCapabilities":{},"x-n":-1e-400,"x-s":"1e400"`), fast: true},
		{name: "arguments number out of range", body: fastCall("105", `"up_echo"`, `{"text":"x","n":1e400}`)},
		{name: "arguments number in range", body: fastCall("106", `"up_echo"`, `{"text":"x","n":[1.7e308,-1e-400,`+strings.Repeat("9", 300)+`]}`), fast: true},
		{name: "request state number", body: strings.Replace(fastCall("107", `"up_echo"`, `{"text":"x"}`), `"arguments"`, `"requestState":5,"arguments"`, 1)},
		{name: "input responses string", body: strings.Replace(fastCall("108", `"up_echo"`, `{"text":"x"}`), `"arguments"`, `"inputResponses":"x","arguments"`, 1)},
		{name: "input responses mistyped", body: strings.Replace(fastCall("109", `"up_echo"`, `{"text":"x"}`), `"arguments"`, `"inputResponses":{"a":5},"arguments"`, 1)},
		{name: "input responses null", body: strings.Replace(fastCall("127", `"up_echo"`, `{"text":"x"}`), `"arguments"`, `"inputResponses":null,"requestState":null,"arguments"`, 1), fast: true, session: true},
		{name: "other member out of range", body: strings.Replace(fastCall("128", `"up_echo"`, `{"text":"x"}`), `"arguments"`, `"x":1e999,"arguments"`, 1)},
		{name: "meta big number", body: leanCall("94", `"up_echo"`, `{"text":"x"}`, `"io.modelcontextprotocol/clientCapabilities":{},"x-n":123456789012345678901234567890`), fast: true},
		{name: "meta escaped html key", body: leanCall("95", `"up_echo"`, `{"text":"x"}`, `"io.modelcontextprotocol/clientCapabilities":{},"<a>&\u2028":"<b>"`), fast: true},
		{name: "task asked in meta", body: leanCall("96", `"up_echo"`, `{"text":"x"}`, `"io.modelcontextprotocol/clientCapabilities":{},"`+taskMetaKey+`":{"ttl":60000}`), fast: true},
		{name: "task asked in meta null", body: leanCall("97", `"up_echo"`, `{"text":"x"}`, `"io.modelcontextprotocol/clientCapabilities":{},"`+taskMetaKey+`":null`), fast: true},
		{name: "tasks declared", body: leanCall("98", `"up_echo"`, `{"text":"x"}`, `"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`), fast: true},
		{name: "tasks declared of a handshake-era server", header: map[string]string{"Mcp-Name": "old_slow"}, body: leanCall("99", `"old_slow"`, `{"ms":1}`, `"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`), fast: true},
		{name: "client info escaped", body: leanCall("100", `"up_echo"`, `{"text":"x"}`, `"io.modelcontextprotocol/clientInfo":{"name":"\u003cn\ud800","version":"1","icons":[{"src":"https://x/i.png"}]},"io.modelcontextprotocol/clientCapabilities":{}`), fast: true},
		{name: "duplicate arguments members", body: fastCall("101", `"up_echo"`, `{"text":"a","text":"b"}`), fast: true},
		{name: "task required of a handshake-era server", header: map[string]string{"Mcp-Name": "raw_task"}, body: fastCall("130", `"raw_task"`, `{}`), fast: true},
		{name: "task required asked in meta", header: map[string]string{"Mcp-Name": "raw_task"}, body: leanCall("131", `"raw_task"`, `{}`, `"io.modelcontextprotocol/clientCapabilities":{},"`+taskMetaKey+`":{}`), fast: true},
		{name: "handshake-era server", header: map[string]string{"Mcp-Name": "raw_t"}, body: fastCall("132", `"raw_t"`, `{}`), fast: true},
		{name: "escaped params keys", body: `{"jsonrpc":"2.0","id":133,"method":"tools/call","params":{"n\u0061me":"up_echo","\u0061rguments":{"text":"x"},"_m\u0065ta":{` + fastMeta + `,"x\/y":1}}}`, fast: true, want: `"text":"x"`},
		{name: "escaped client info key", body: leanCall("134", `"up_echo"`, `{"text":"x"}`, `"io.modelcontextprotocol\/clientInfo":{"n\u0061me":"n","version":"1"},"io.modelcontextprotocol/clientC\u0061pabilities":{"elicit\u0061tion":{}}`), fast: true},
		{name: "capabilities duplicate members", header: map[string]string{"Mcp-Name": "up_caps"}, body: leanCall("135", `"up_caps"`, `{}`, `"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"roots":{},"elicitation":null,"roots":{"listChanged":true},"sampling":{},"sampling":{"tools":{}}}`), fast: true, session: true, want: `listChanged`},
		{name: "capabilities deep experimental", header: map[string]string{"Mcp-Name": "up_caps"}, body: leanCall("136", `"up_caps"`, `{}`, `"io.modelcontextprotocol/clientCapabilities":{"experimental":{"x":`+strings.Repeat("[", 200)+strings.Repeat("]", 200)+`}}`), fast: true},
		// A server that answers what it likes.
		evilCase("110", "result type input_required", `{"content":[{"type":"text","text":"x"}],"resultType":"input_required"}`),
		evilCase("111", "result type bogus", `{"content":[{"type":"text","text":"x"}],"resultType":"bogus"}`),
		evilCase("112", "input requests and content", `{"content":[{"type":"text","text":"x"}],"inputRequests":{"q":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object"}}}}}`),
		evilCase("113", "input requests only", `{"inputRequests":{"q":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object"}}}},"requestState":"s"}`),
		evilCase("114", "input requests empty", `{"inputRequests":{}}`),
		func() fastCase {
			// The gateway names itself, never the server behind it.
			c := evilCase("115", "server info present", `{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"evil"},"resultType":"x"}}`)
			c.want = `"io.modelcontextprotocol/serverInfo":{"name":"mcpadapter-gateway"`
			return c
		}(),
		evilCase("116", "html and separators", `{"content":[{"type":"text","text":"<b>&amp;</b> \u2028 \ud800 \u0000"}]}`),
		evilCase("117", "invalid utf-8", "{\"content\":[{\"type\":\"text\",\"text\":\"a<FF>b\"}],\"structuredContent\":{\"k<FF>\":\"<FF>\"}}"),
		evilCase("118", "content null structured", `{"content":null,"structuredContent":{"a":1}}`),
		evilCase("119", "empty result", `{}`),
		evilCase("120", "null result", `null`),
		evilCase("121", "error result with meta", `{"content":[{"type":"text","text":"x"}],"isError":true,"_meta":null}`),
		evilCase("122", "request state alone", `{"content":[{"type":"text","text":"x"}],"requestState":"s"}`),
		evilCase("123", "duplicate content", `{"content":[],"content":[{"type":"text","text":"dup"}],"resultType":"complete","resultType":"input_required"}`),
		evilCase("124", "unknown content type", `{"content":[{"type":"hologram","text":"x"}]}`),
		evilCase("125", "result type with escapes", `{"content":[{"type":"text","text":"x"}],"result\u0054ype":"input_required"}`),
		evilCase("126", "huge result", `{"content":[{"type":"text","text":"<HUGE>"}]}`),
		evilCase("327", "extra members and error", `{"content":[{"type":"text","text":"x","extra":1}],"isError":true,"secret":"s3cr3t","_meta":{"token":"s3cr3t","n":1e400}}`),
		evilCase("328", "plain text invalid utf-8", "{\"content\":[{\"type\":\"text\",\"text\":\"a<FF>b \\u0001\\u007f\u2029 <>&\"}]}"),
		evilCase("329", "text with meta", `{"content":[{"type":"text","text":"x","_meta":{"k":"v"}}],"_meta":{"a":[1,{"b":null}]}}`),
		evilCase("330", "result type empty", `{"content":[{"type":"text","text":"x"}],"resultType":""}`),
		evilCase("331", "result type null", `{"content":[{"type":"text","text":"x"}],"resultType":null,"isError":false}`),
		evilCase("332", "array result", `[{"content":[]}]`),
		evilCase("333", "string result", `"complete"`),
		evilCase("334", "duplicate text and error", `{"content":[{"type":"text","text":"a","text":"b"}],"isError":false,"isError":true}`),
	}, append(append(hostileFastCases(), plainFastCases()...), streamedFastCases()...)...)
}

// evilCase is a call of evil_echo whose server answers result.
func evilCase(id, name, result string) fastCase {
	text, _ := json.Marshal("raw:" + result)
	return fastCase{name: name, header: map[string]string{"Mcp-Name": "evil_echo"}, body: fastCall(id, `"evil_echo"`, `{"text":`+string(text)+`}`), fast: true}
}

// denyFailTool refuses the tool fail to everyone.
type denyFailTool struct{}

func (denyFailTool) Allow(_ context.Context, _, _, _, name string) bool { return name != "fail" }

// startDiffGateways starts the gateway twice over the same servers: with
// the fast path and without it.
func startDiffGateways(t *testing.T, search bool) (fast, slow *Gateway, fastURL, slowURL string) {
	servers := diffServers(t)
	fast, fastURL = startGateway(t, servers, diffOptions(search, false))
	slow, slowURL = startGateway(t, servers, diffOptions(search, true))
	return fast, slow, fastURL, slowURL
}

// diffOptions are the options of a gateway startDiffGateways starts, on
// the fast paths or (slowOnly) without them.
func diffOptions(search, slowOnly bool) *Options {
	o := &Options{Policy: denyFailTool{}, MaxRequestBytes: 4096, slowPathOnly: slowOnly}
	if search {
		o.ToolSearch = &mcpadapter.ToolSearch{Threshold: -1}
	}
	return o
}

// diffServers starts the servers of startDiffGateways' gateways: good,
// dying, hostile, raw, and ones that send progress and log messages.
func diffServers(t *testing.T) []Server {
	up := startCapsServer(t)
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	// Servers that send progress reports and log messages (the tool
	// notify): a 2026-07-28 one and a handshake-era one.
	nt := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "nt", Era: testserver.Modern, Notify: true}), testserver.Stateless())
	lg := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "lg", Era: testserver.Legacy, Notify: true}))
	return []Server{{Name: "up", Target: up.URL}, {Name: "old", Target: old.URL}, {Name: "dies", Target: dyingProxy(t, up.URL)}, {Name: "evil", Target: hostileProxy(t, up.URL)}, {Name: "raw", Target: testserver.StartRawHTTP(t, nil).URL},
		{Name: "nt", Target: nt.URL}, {Name: "lg", Target: lg.URL}}
}

// dyingProxy passes requests on to target, but drops the connection of a
// tools/call: the server dies mid-call.
func dyingProxy(t *testing.T, target string) string {
	u, _ := url.Parse(target)
	rp := httputil.NewSingleHostReverseProxy(u)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
				_ = c.Close()
			}
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + u.Path
}

// hostileProxy passes requests on to target, but answers a tools/call
// whose text argument starts with "raw:" itself, with the rest of the
// text as the call's result: a server that answers what it likes; and one
// whose text argument starts with "args:" with the call's arguments as it
// got them, byte for byte, as the result's text.
func hostileProxy(t *testing.T, target string) string {
	u, _ := url.Parse(target)
	rp := httputil.NewSingleHostReverseProxy(u)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Arguments struct {
					Text string `json:"text"`
				} `json:"arguments"`
			} `json:"params"`
		}
		var args struct {
			Params struct {
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil && json.Unmarshal(body, &args) == nil && msg.Method == "tools/call" {
			if strings.HasPrefix(msg.Params.Arguments.Text, "args:") {
				// The arguments as the gateway sent them, byte for byte.
				text, _ := json.Marshal(string(args.Params.Arguments))
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":{"content":[{"type":"text","text":`+string(text)+`}]}}`)
				return
			}
			if raw, ok := strings.CutPrefix(msg.Params.Arguments.Text, "raw:"); ok {
				raw = strings.ReplaceAll(raw, "<FF>", "\xff")
				raw = strings.ReplaceAll(raw, "<HUGE>", strings.Repeat("<x>&", 100000))
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":`+raw+`}`)
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + u.Path
}

// fastAnswer is what a client sees of an answer.
type fastAnswer struct {
	Status  int
	Headers map[string]string
	Body    any    // JSON-RPC messages (normalized), or text
	Raw     string // the body's bytes (normalized): escapes, order, framing
}

var answerHeaders = []string{"Content-Type", "Cache-Control", "Connection", "Allow", "Mcp-Session-Id"}

func sendCase(t *testing.T, url string, c fastCase) fastAnswer {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t, 30*time.Second), http.MethodPost, url, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range fastHeaders("up_echo") {
		req.Header.Set(k, v)
	}
	setHeaders(req.Header, c.header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return answerOf(resp.StatusCode, resp.Header, body)
}

// answerOf is what a client sees of an answer with status, header and
// body.
func answerOf(status int, header http.Header, body []byte) fastAnswer {
	a := fastAnswer{Status: status, Headers: map[string]string{}}
	for _, h := range answerHeaders {
		a.Headers[h] = strings.Join(header.Values(h), ",")
	}
	a.Body = normalizeAnswer(header.Get("Content-Type"), body)
	a.Raw = string(normalizeBytes(body))
	return a
}

// What differs from one answer to the next: random request states,
// task ids and the keys of a parked call's questions, times, and whether
// a task made for a quick call has ended when its creation is answered.
var (
	stateRE      = regexp.MustCompile(`"(requestState|taskId)":"[^"]*"`)
	timeRE       = regexp.MustCompile(`"(createdAt|lastUpdatedAt)":"[^"]*"`)
	askRE        = regexp.MustCompile(`"(q[0-9]+)-[0-9a-f]{8}":`)
	taskStatusRE = regexp.MustCompile(`("task":\{[^{}]*"status":)"(working|completed)"`)
)

// normalizeBytes returns body with what differs from one answer to the
// next replaced.
func normalizeBytes(body []byte) []byte {
	body = stateRE.ReplaceAll(body, []byte(`"$1":"RANDOM"`))
	body = timeRE.ReplaceAll(body, []byte(`"$1":"TIME"`))
	body = taskStatusRE.ReplaceAll(body, []byte(`$1"WORKING-OR-COMPLETED"`))
	return askRE.ReplaceAll(body, []byte(`"$1-RANDOM":`))
}

// normalizeAnswer returns body as JSON-RPC messages (SSE events or one JSON
// body) with each requestState (random) replaced, or as text.
func normalizeAnswer(ct string, body []byte) any {
	body = normalizeBytes(body)
	var msgs []any
	if strings.HasPrefix(ct, "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			line := sc.Text()
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				var m any
				if json.Unmarshal([]byte(data), &m) != nil {
					m = data
				}
				msgs = append(msgs, m)
			} else if line != "" {
				msgs = append(msgs, "line: "+line)
			}
		}
		if err := sc.Err(); err != nil {
			msgs = append(msgs, "unreadable: "+err.Error())
		}
		return msgs
	}
	var m any
	if strings.HasPrefix(ct, "application/json") && json.Unmarshal(body, &m) == nil {
		return m
	}
	return string(body)
}

// TestFastPathDifferential sends the same requests (good, bad, hostile)
// through the gateway's fast path and through go-sdk's handler: a client
// sees the same status, headers and JSON-RPC answers; the requests the
// rule takes are answered on the fast path.
func TestFastPathDifferential(t *testing.T) {
	fast, _, fastURL, slowURL := startDiffGateways(t, false)
	sfast, _, sfastURL, sslowURL := startDiffGateways(t, true)
	for _, c := range fastCases() {
		fast, fastURL, slowURL := fast, fastURL, slowURL
		if c.search {
			fast, fastURL, slowURL = sfast, sfastURL, sslowURL
		}
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(c.body))
			for k, v := range fastHeaders("up_echo") {
				req.Header.Set(k, v)
			}
			setHeaders(req.Header, c.header)
			f := fast.fastRequestOf(req)
			if got := f != nil; got != c.fast {
				t.Errorf("fast path taken: %v, want %v", got, c.fast)
			}
			if f != nil && (f.call != nil) == c.session {
				t.Errorf("direct (direct.go): %v, want %v", f.call != nil, !c.session)
			}
			if b, _ := io.ReadAll(req.Body); string(b) != c.body {
				t.Errorf("the body put back is %q, want %q", b, c.body)
			}
			got, want := sendCase(t, fastURL, c), sendCase(t, slowURL, c)

			if raw, _ := json.Marshal(got.Body); !strings.Contains(string(raw), c.want) || strings.Contains(string(raw), `"unreadable: `) {
				t.Errorf("the answer %.2000s holds no %s, or cannot be read", raw, c.want)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("fast path answered\n%s\ngo-sdk answered\n%s", dump(got), dump(want))
			}
		})
	}
}

func dump(a fastAnswer) string {
	b, _ := json.MarshalIndent(a, "", "  ")
	return string(b)
}

// TestFastPathRetryAnswers: a 2026-07-28 client answers an input_required
// result by calling again with its answers and the requestState; the retry
// is answered on the fast path as on go-sdk's, the question asked by a
// handshake-era server reaching the server.
func TestFastPathRetryAnswers(t *testing.T) {
	_, _, fastURL, slowURL := startDiffGateways(t, false)
	for _, u := range []string{slowURL, fastURL} {
		state, key := inputOf(t, u)
		body := strings.Replace(fastCall("2", `"old_book"`, `{"date":"mon"}`), `"arguments"`, fmt.Sprintf(`"requestState":%q,"inputResponses":{%q:{"action":"accept","content":{"guests":4}}},"arguments"`, state, key), 1)
		got := sendCase(t, u, fastCase{name: "retry", header: map[string]string{"Mcp-Name": "old_book"}, body: body})
		raw, _ := json.Marshal(got.Body)
		if got.Status != http.StatusOK || !strings.Contains(string(raw), "Booked 4 guests") {
			t.Errorf("%s: the retry got %d %s", u, got.Status, raw)
		}
	}
}

// inputOf calls old_book at url and returns the requestState and the key
// of its question.
func inputOf(t *testing.T, url string) (state, key string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(testCtx(t, 30*time.Second), http.MethodPost, url, strings.NewReader(fastCall("1", `"old_book"`, `{"date":"mon"}`)))
	for k, v := range fastHeaders("old_book") {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	data := string(b)
	if _, d, ok := strings.Cut(data, "data: "); ok {
		data = d // SSE
	}
	var m struct {
		Result struct {
			RequestState  string                     `json:"requestState"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(data)), &m); err != nil || m.Result.RequestState == "" {
		t.Fatalf("no input_required answer: %s", b)
	}
	for k := range m.Result.InputRequests {
		key = k
	}
	return m.Result.RequestState, key
}

// TestFastPathListChangedMidCall: the gateway's tools/list_changed, sent to
// every session while a call runs on the fast path, neither reaches the
// call's stream nor ends the call.
func TestFastPathListChangedMidCall(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "up", Era: testserver.Modern, Mutable: true}), testserver.Stateless())
	g, u := startGateway(t, []Server{{Name: "up", Target: up.URL}}, nil)
	done := make(chan fastAnswer, 1)
	go func() {
		done <- sendCase(t, u, fastCase{name: "slow", header: map[string]string{"Mcp-Name": "slow"}, body: fastCall("1", `"slow"`, `{"ms":700}`)})
	}()
	time.Sleep(200 * time.Millisecond)
	cs := connect(t, u, v0728, nil)
	if _, err := cs.CallTool(testCtx(t, 10*time.Second), &mcp.CallToolParams{Name: "tool_add", Arguments: map[string]any{"name": "fresh"}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, ok := g.cat.tool("fresh"); !ok && time.Now().Before(deadline); _, ok = g.cat.tool("fresh") {
		time.Sleep(10 * time.Millisecond)
	}
	if _, ok := g.cat.tool("fresh"); !ok {
		t.Fatal("the gateway never listed the new tool")
	}
	a := <-done
	raw, _ := json.Marshal(a.Body)
	if a.Status != http.StatusOK || !strings.Contains(string(raw), `"text":"slept 700ms"`) || strings.Contains(string(raw), "list_changed") {
		t.Fatalf("the call got %d %s", a.Status, raw)
	}
}

// startCapsServer starts a stateless 2026-07-28 server on loopback whose
// tool caps answers with the client capabilities the server learns of
// the call (the request's _meta).
func startCapsServer(t *testing.T) *testserver.HTTPServer {
	t.Helper()
	upServer := testserver.New(testserver.Options{Name: "up", Era: testserver.Modern})
	upServer.AddTool(&mcp.Tool{Name: "caps", Description: "Say what the client can be asked, as the server learns it.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			caps, _ := json.Marshal(req.ClientCapabilities())
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(caps)}}}, nil
		})
	return testserver.StartStreamable(t, upServer, testserver.Stateless())
}

// TestFastPathRealClients: a go-sdk client at 2026-07-28 and mcpadapter's
// own client call a tool through the gateway, and their calls are answered
// on the fast path.
func TestFastPathRealClients(t *testing.T) {
	up := startCapsServer(t)
	g, err := New([]Server{{Name: "up", Target: up.URL}}, &Options{Logger: quietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	if err := g.Start(testCtx(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	calls, fastCalls := 0, 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Method") == "tools/call" {
			body, _ := io.ReadAll(r.Body)
			probe := r.Clone(r.Context())
			probe.Body = io.NopCloser(bytes.NewReader(body))
			fast := g.fastRequestOf(probe) != nil
			mu.Lock()
			calls++
			if fast {
				fastCalls++
			}
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		g.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	url := ts.URL + "/mcp"
	ctx := testCtx(t, 30*time.Second)

	cs := connect(t, url, v0728, nil)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "sdk"}})
	if err != nil || texts(res) != "sdk" {
		t.Fatalf("go-sdk client: %v %v", texts(res), err)
	}
	c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{Name: "gw", Logger: quietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if info, err := c.Connect(ctx); err != nil || info.Era != mcpadapter.EraDiscover {
		t.Fatalf("connect: %v %v", info, err)
	}
	r, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"adapter"}`), nil)
	if err != nil || r.Text() != "adapter" {
		t.Fatalf("mcpadapter client: %v %v", r, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 2 || fastCalls != 2 {
		t.Errorf("%d of %d calls took the fast path, want 2 of 2", fastCalls, calls)
	}
}

// TestFastPathClientGoesAway: a client that goes away mid-call ends the
// call on the server, on the fast path as on go-sdk's.
func TestFastPathClientGoesAway(t *testing.T) {
	fast, slow, fastURL, slowURL := startDiffGateways(t, false)
	for _, side := range []struct {
		g   *Gateway
		url string
	}{{fast, fastURL}, {slow, slowURL}} {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, side.url, strings.NewReader(fastCall("1", `"up_slow"`, `{"ms":3000}`)))
		for k, v := range fastHeaders("up_slow") {
			req.Header.Set(k, v)
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		cancel()
		deadline := time.Now().Add(1500 * time.Millisecond) // the call would take 3s
		for side.g.inflightCount() > 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := side.g.inflightCount(); n != 0 {
			t.Errorf("%s: %d calls still in flight after the client went away", side.url, n)
		}
	}
}

// TestFastPathLean: a plain request's session is handed the client's info
// and capabilities read once, and params without the protocol version
// (lean.go); other _meta members are kept as they were.
func TestFastPathLean(t *testing.T) {
	g, _, _, _ := startDiffGateways(t, false)
	body := leanCall("1", `"up_echo"`, `{"text":"x"}`, `"io.modelcontextprotocol/clientInfo":{"name":"n","version":"2"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"url":{}},"roots":{}},"x-trace":[1, "a"]`)
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	for k, v := range fastHeaders("up_echo") {
		r.Header.Set(k, v)
	}
	f := g.fastRequestOf(r)
	if f == nil || f.init == nil {
		t.Fatalf("the request was not read once: %+v", f)
	}
	if f.call == nil || f.call.Name != "up_echo" || string(f.call.Arguments) != `{"text":"x"}` || f.call.Meta["x-trace"] == nil {
		t.Errorf("the call is not direct (direct.go): %+v", f.call)
	}
	g.cat.registered.Store(&map[string]bool{})
	r.Body = io.NopCloser(strings.NewReader(body))
	if f := g.fastRequestOf(r); f == nil || f.call != nil {
		t.Errorf("a call of a tool go-sdk's registry does not hold: %+v", f)
	}
	if ip := f.init; ip.ProtocolVersion != v0728 || ip.ClientInfo == nil || ip.ClientInfo.Version != "2" || ip.Capabilities.Elicitation == nil || ip.Capabilities.Elicitation.URL == nil || ip.Capabilities.RootsV2 == nil {
		t.Errorf("initialize params %+v, capabilities %+v", ip, ip.Capabilities)
	}
	p, ok := members(f.leanParams())
	if !ok {
		t.Fatalf("params %s", f.leanParams())
	}
	meta, _ := members(p["_meta"])
	if _, ok := meta[mcp.MetaKeyProtocolVersion]; ok || string(meta["x-trace"]) != `[1, "a"]` || string(p["arguments"]) != `{"text":"x"}` || string(p["name"]) != `"up_echo"` || len(meta) != 1 {
		t.Errorf("params %s", f.leanParams())
	}
}

// setHeaders sets the headers of over in h; an empty value deletes one.
func setHeaders(h http.Header, over map[string]string) {
	for k, v := range over {
		if v == "" {
			h.Del(k)
		} else {
			h.Set(k, v)
		}
	}
}

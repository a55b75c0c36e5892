package gateway

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// hostileFastCases are more requests for TestFastPathDifferential, each
// aimed at a part of the fast path written by hand: the answer's id and
// result (encodeAnswer, marshalDirect), the arguments' check (checkArgs)
// and what is sent on to the server, and the server's name for itself
// (dropServerInfo).
func hostileFastCases() []fastCase {
	echo := func(id, name, args string, fast bool) fastCase {
		return fastCase{name: name, body: fastCall(id, `"up_echo"`, args), fast: fast}
	}
	forwarded := func(id, name, args string) fastCase {
		c := evilCase(id, name, "")
		c.body = fastCall(id, `"evil_echo"`, args)
		c.want = `"type":"text"`
		return c
	}
	named := func(id, name, result string) fastCase {
		c := evilCase(id, name, result)
		c.want = `"io.modelcontextprotocol/serverInfo":{"name":"mcpadapter-gateway"`
		return c
	}
	deep := func(n int) string {
		return `{"text":"x","d":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
	}
	return []fastCase{
		// The answer's id: written by hand for the ids the fast path
		// takes (an integer of at most 15 digits, a string without
		// escapes), by go-sdk's encoder for the rest.
		echo("0", "id zero", `{"text":"x"}`, true),
		echo("-0", "id minus zero", `{"text":"x"}`, true),
		echo("999999999999999", "id of 15 digits", `{"text":"x"}`, true),
		echo("1000000000000000", "id of 16 digits", `{"text":"x"}`, false),
		echo("1e2", "id with an exponent", `{"text":"x"}`, false),
		echo("1.0", "id with a fraction", `{"text":"x"}`, false),
		echo(`"<a&b>"`, "string id with html", `{"text":"x"}`, true),
		echo(`""`, "string id empty", `{"text":"x"}`, true),
		echo("\"a\u2028b\"", "string id with a line separator", `{"text":"x"}`, true),
		echo("\"\u2029\"", "string id a paragraph separator", `{"text":"x"}`, true),
		echo("\"\x7f\ufffe\U0010ffff\"", "string id with DEL and noncharacters", `{"text":"x"}`, true),
		echo(`"a/b"`, "string id with a slash", `{"text":"x"}`, true),
		echo(`"a\/b"`, "string id with an escaped slash", `{"text":"x"}`, false),
		echo("\"a\tb\"", "string id with a raw tab", `{"text":"x"}`, false),
		echo(`"`+strings.Repeat("x", 3000)+`"`, "string id long", `{"text":"x"}`, true),
		echo(`"😀é"`, "string id of emoji", `{"text":"x"}`, true),
		// A result a server writes as it likes, written again by the
		// gateway.
		evilCase("200", "result numbers", `{"content":[],"structuredContent":{"n":[1.0,1e2,-0,0.1e-7,12345678901234567890,5e-324,1.7976931348623157e308]}}`),
		evilCase("201", "result number out of range", `{"content":[],"structuredContent":{"n":1e400}}`),
		evilCase("202", "result structured string", `{"content":[],"structuredContent":"<script>&\u2028"}`),
		evilCase("203", "result structured array", `{"content":[],"structuredContent":[1,"<",null,true]}`),
		evilCase("204", "result with white space", "{ \"content\" : [ { \"type\" : \"text\" , \"text\" : \"x\" } ] ,\n\t\"structuredContent\" : { \"a\" : [ 1 , 2 ] } }"),
		evilCase("205", "result text of control characters", `{"content":[{"type":"text","text":"\u0000\u001f\u007f\ud83d\ude00\ufffe\u2029/\\"}]}`),
		evilCase("206", "result meta with html keys", `{"content":[],"_meta":{"<k>&\u2028":"</script>","x":{"y":["\u2028"]}}}`),
		evilCase("207", "result deep", `{"content":[],"structuredContent":`+strings.Repeat("[", 300)+strings.Repeat("]", 300)+`}`),
		evilCase("208", "result with a raw line separator", "{\"content\":[{\"type\":\"text\",\"text\":\"a\u2028b\u2029c\"}]}"),
		evilCase("209", "result invalid utf-8 in meta", `{"content":[],"_meta":{"<FF>":"<FF>"},"structuredContent":["<FF>"]}`),
		evilCase("210", "result type nested", `{"content":[],"structuredContent":{"resultType":"input_required","inputRequests":{"q":{}}}}`),
		evilCase("211", "result annotations", `{"content":[{"type":"text","text":"x","annotations":{"audience":["user"],"priority":0.5},"_meta":{"<a>":1}}]}`),
		evilCase("212", "result escaped keys", `{"c\u006fntent":[{"type":"text","text":"x"}],"is\u0045rror":true}`),
		evilCase("213", "result error with structure", `{"content":[{"type":"text","text":"<e>"}],"structuredContent":{"e":"&"},"isError":true}`),
		evilCase("214", "result image", `{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}]}`),
		evilCase("215", "result resource link", `{"content":[{"type":"resource_link","uri":"https://x/<a>&b","name":"<n>"}]}`),
		evilCase("216", "result content not an array", `{"content":{"type":"text","text":"x"}}`),
		evilCase("217", "result an array", `[{"content":[]}]`),
		// The server names itself: the gateway names itself instead.
		named("220", "server info escaped", `{"content":[],"_meta":{"io.modelcontextprotocol\/serverInfo":{"name":"evil"}}}`),
		named("221", "server info twice", `{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpadapter-gateway"},"io.modelcontextprotocol/serverInfo":{"name":"evil"}}}`),
		named("222", "server info in two metas", `{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"evil"}},"_meta":{"x":1}}`),
		named("223", "server info null", `{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":null}}`),
		named("224", "server info nested", `{"content":[],"_meta":{"x":{"io.modelcontextprotocol/serverInfo":{"name":"evil"}}},"structuredContent":{"io.modelcontextprotocol/serverInfo":{"name":"evil"}}}`),
		// Arguments: checked to be an object (checkArgs) and sent on.
		echo("230", "arguments in white space", " \n\t{\"text\":\"x\"} \r\n", true),
		echo("231", "arguments empty", `{}`, true),
		echo("232", "arguments empty array", `[]`, true),
		echo("233", "arguments true", `true`, true),
		echo("234", "arguments number", `1`, true),
		echo("235", "arguments an object in a string", `"{}"`, true),
		echo("236", "arguments array in white space", ` [ ] `, true),
		echo("237", "arguments deep within the fast path", deep(470), true),
		echo("238", "arguments deep past the fast path", deep(600), false),
		echo("239", "arguments deeper than go-sdk reads", deep(1100), false),
		echo("240", "arguments invalid", `{"text":"x",}`, false),
		echo("241", "arguments escaped key", `{"t\u0065xt":"x"}`, true),
		echo("242", "arguments numbers", `{"text":"x","n":[1.0,-0,1e2,5e-324,123456789012345678901234567890]}`, true),
		echo("243", "arguments with invalid utf-8", "{\"text\":\"x\xff\"}", false),
		echo("244", "arguments with a lone surrogate", `{"text":"x\ud800"}`, true),
		forwarded("250", "arguments sent on", ` { "text" : "args:", "a" : [1.0,1e2,-0], "<k>":"&\u2028", "dup":1, "dup":2, "t\u0065":"\ud800", "w" : { } } `),
		forwarded("251", "arguments sent on with escapes", `{"text":"args:","s":"\/\b\f\n\r\t\"\\\u00e9\u0000","big":123456789012345678901234567890}`),
		func() fastCase {
			c := forwarded("252", "arguments sent on through a session", `{"text":"args:","x":[ 1 , 2 ]}`)
			c.body = strings.Replace(c.body, `"arguments"`, `"inputResponses":null,"arguments"`, 1)
			c.session = true
			return c
		}(),
	}
}

// TestFastPathDifferentialComparator: the comparison TestFastPathDifferential
// makes tells apart answers a client sees differently (bytes that decode
// alike included), and only those.
func TestFastPathDifferentialComparator(t *testing.T) {
	sse := http.Header{"Content-Type": {"text/event-stream"}, "Cache-Control": {"no-cache, no-transform"}}
	event := func(data string) []byte { return []byte("event: message\ndata: " + data + "\n\n") }
	base := answerOf(200, sse, event(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"<a>"}],"requestState":"s1"}}`))
	if same := answerOf(200, sse, event(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"<a>"}],"requestState":"s2"}}`)); !reflect.DeepEqual(base, same) {
		t.Errorf("answers that differ in their random request state differ:\n%s\n%s", dump(base), dump(same))
	}
	json := http.Header{"Content-Type": {"application/json"}, "Cache-Control": {"no-cache, no-transform"}}
	for name, other := range map[string]fastAnswer{
		"escaped html":     answerOf(200, sse, event(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\u003ca\u003e"}],"requestState":"s1"}}`)),
		"member order":     answerOf(200, sse, event(`{"id":1,"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"<a>"}],"requestState":"s1"}}`)),
		"white space":      answerOf(200, sse, event(`{"jsonrpc":"2.0", "id":1,"result":{"content":[{"type":"text","text":"<a>"}],"requestState":"s1"}}`)),
		"number written":   answerOf(200, sse, event(`{"jsonrpc":"2.0","id":1.0,"result":{"content":[{"type":"text","text":"<a>"}],"requestState":"s1"}}`)),
		"framing":          answerOf(200, sse, []byte("data: "+`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"<a>"}],"requestState":"s1"}}`+"\n\n")),
		"status":           answerOf(400, sse, event(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"<a>"}],"requestState":"s1"}}`)),
		"content type":     answerOf(200, json, []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"<a>"}],"requestState":"s1"}}`)),
		"another id":       answerOf(200, sse, event(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"<a>"}],"requestState":"s1"}}`)),
		"a line separator": answerOf(200, sse, event("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"<a>\u2028\"}],\"requestState\":\"s1\"}}")),
	} {
		if reflect.DeepEqual(base, other) {
			t.Errorf("%s: the comparison takes\n%s\nfor\n%s", name, dump(other), dump(base))
		}
	}
}

package gateway

// plainFastCases are more requests for TestFastPathDifferential, each aimed
// at what the fast path reads and writes without go-sdk's decoder and
// encoder: a direct call's params made from the members read
// (directParams), the _meta's strings (metaString), the client's
// capabilities sent on encoded once per capabilities written
// (encodedCaps), and a plain result written by hand (plainResult).
func plainFastCases() []fastCase {
	const capsKey = `"io.modelcontextprotocol/clientCapabilities":`
	whoami := func(id, name, meta string) fastCase {
		return fastCase{name: name, header: map[string]string{"Mcp-Name": "up_whoami"}, body: leanCall(id, `"up_whoami"`, `{}`, meta), fast: true, want: `clientCapabilities`}
	}
	html := capsKey + `{"experimental":{"<a>&\u2028":{"s":"</script>\u2029&","n":[1.5,-0,1e2]}},"extensions":{"io.x/<y>":{}}}`
	return []fastCase{
		// The capabilities a server gets, one client's after another's:
		// the same bytes again, others, the first again.
		whoami("300", "capabilities sent on", capsKey+`{"elicitation":{"form":{}}}`),
		whoami("301", "capabilities sent on again", capsKey+`{"elicitation":{"form":{}}}`),
		whoami("302", "capabilities with html sent on", html),
		whoami("303", "other capabilities sent on", capsKey+`{"roots":{"listChanged":true},"sampling":{"tools":{}}}`),
		whoami("304", "capabilities with html sent on again", html),
		whoami("305", "capabilities in white space sent on", capsKey+` { "roots" : { } } `),
		whoami("306", "capabilities empty sent on", capsKey+`{}`),
		// A member named twice: go-sdk's session reads the capabilities.
		func() fastCase {
			c := whoami("307", "capabilities duplicate members sent on", capsKey+`{"sampling":{},"sampling":null,"roots":{"listChanged":true},"roots":{}}`)
			c.session = true
			return c
		}(),
		func() fastCase {
			c := whoami("334", "capabilities nested duplicate members sent on", capsKey+`{"experimental":{"a":{"x":1},"a":{"y":2}},"roots":{"listChanged":true}}`)
			c.session = true
			return c
		}(),
		func() fastCase {
			c := whoami("335", "client info duplicate members", `"io.modelcontextprotocol/clientInfo":{"name":"a","icons":[{"src":"https://x/1.png","sizes":["1x1"]}],"icons":[{"src":"https://x/2.png"}],"version":"1"},`+capsKey+`{}`)
			c.session = true
			return c
		}(),
		// _meta members the lean session does not read: sent on as they are.
		whoami("308", "capabilities key upper-case beside", capsKey+`{},"IO.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/ProtocolVersion":"x"`),
		whoami("309", "client info key upper-case", capsKey+`{},"io.modelcontextprotocol/ClientInfo":{"name":"mallory"}`),
		{name: "protocol version escaped", header: map[string]string{"Mcp-Name": "up_whoami"}, body: `{"jsonrpc":"2.0","id":310,"method":"tools/call","params":{"name":"up_whoami","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-2\u0038",` + capsKey + `{}}}}`, fast: true, want: `clientCapabilities`},
		{name: "protocol version null", body: `{"jsonrpc":"2.0","id":311,"method":"tools/call","params":{"name":"up_echo","arguments":{"text":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":null,` + capsKey + `{}}}}`},
		{name: "protocol version number", body: `{"jsonrpc":"2.0","id":312,"method":"tools/call","params":{"name":"up_echo","arguments":{"text":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":20260728,` + capsKey + `{}}}}`},
		{name: "protocol version object", body: `{"jsonrpc":"2.0","id":313,"method":"tools/call","params":{"name":"up_echo","arguments":{"text":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":{"v":"2026-07-28"},` + capsKey + `{}}}}`},
		{name: "capabilities a string", body: leanCall("314", `"up_echo"`, `{"text":"x"}`, capsKey+`"{}"`), fast: true, session: true},
		{name: "client info an array", body: leanCall("315", `"up_echo"`, `{"text":"x"}`, `"io.modelcontextprotocol/clientInfo":["n","1"],`+capsKey+`{}`), fast: true, session: true},
		{name: "meta member null beside", body: leanCall("316", `"up_echo"`, `{"text":"x"}`, capsKey+`{},"x":null`), fast: true, want: `"text":"x"`},
		// Arguments a direct call takes as they are.
		{name: "arguments null in white space", body: `{"jsonrpc":"2.0","id":317,"method":"tools/call","params":{"name":"up_echo","arguments" : null ,"_meta":{` + fastMeta + `}}}`, fast: true},
		{name: "arguments upper-case beside", body: `{"jsonrpc":"2.0","id":318,"method":"tools/call","params":{"name":"up_echo","arguments":{"text":"a"},"Arguments":{"text":"b"},"_meta":{` + fastMeta + `}}}`, fast: true, session: true},
		{name: "arguments upper-case alone", body: `{"jsonrpc":"2.0","id":319,"method":"tools/call","params":{"name":"up_echo","ARGUMENTS":{"text":"b"},"_meta":{` + fastMeta + `}}}`, fast: true, session: true},
		{name: "arguments with html and separators", body: fastCall("320", `"up_echo"`, `{"text":"<a>&\u2028\u2029\ud800\u0000\u007f"}`), fast: true},
		// Results: plain (text blocks) or not.
		evilCase("321", "result plain text of invalid utf-8", `{"content":[{"type":"text","text":"a<FF>b<&>"},{"type":"text","text":""}]}`),
		evilCase("322", "result text beside an image", `{"content":[{"type":"text","text":"x"},{"type":"image","data":"AAAA","mimeType":"image/png"}]}`),
		evilCase("323", "result text with null meta and annotations", `{"content":[{"type":"text","text":"x","_meta":null,"annotations":null}]}`),
		evilCase("324", "result text with empty meta", `{"content":[{"type":"text","text":"x","_meta":{}}]}`),
		evilCase("325", "result text missing", `{"content":[{"type":"text"}]}`),
		evilCase("326", "result text null", `{"content":[{"type":"text","text":null}]}`),
		evilCase("327", "result plain with empty meta", `{"content":[{"type":"text","text":"x"}],"isError":false,"_meta":{},"structuredContent":null,"requestState":""}`),
		evilCase("328", "result plain error", `{"content":[{"type":"text","text":"<e>"}],"isError":true}`),
		evilCase("329", "result text with a type upper-case", `{"content":[{"type":"TEXT","text":"x"}]}`),
		evilCase("330", "result text type key upper-case", `{"content":[{"Type":"text","text":"x"}]}`),
		evilCase("331", "result content empty", `{"content":[]}`),
		evilCase("332", "result plain with meta beside the server's name", `{"content":[{"type":"text","text":"x"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"evil"},"<k>":"\u2028"}}`),
		evilCase("333", "result plain input requests null", `{"content":[{"type":"text","text":"x"}],"inputRequests":null,"resultType":"complete"}`),
	}
}

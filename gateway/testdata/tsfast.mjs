// The TypeScript SDK's streamable HTTP transport sending 2026-07-28
// tools/calls itself (the SDK's client speaks the handshake era only):
// run as
//   node tsfast.mjs SDK_DIR URL CALLS
// CALLS is a JSON array of {id, name, arguments, extra} (extra: more
// params). For each call it prints, in one JSON array, what came back:
// {id, text (the content's text), resultType, serverName, error}.
const [sdkDir, url, callsJSON] = process.argv.slice(2);
const { StreamableHTTPClientTransport } = await import(sdkDir + "/dist/esm/client/streamableHttp.js");

const out = [];
for (const c of JSON.parse(callsJSON)) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { "Mcp-Method": "tools/call", "Mcp-Name": c.name } },
  });
  transport.setProtocolVersion("2026-07-28");
  const answer = new Promise((resolve, reject) => {
    transport.onmessage = resolve;
    transport.onerror = reject;
    setTimeout(() => reject(new Error("no answer in 30s")), 30000).unref();
  });
  await transport.start();
  const params = {
    name: c.name,
    arguments: c.arguments,
    _meta: {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "ts-fast", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": {},
    },
    ...(c.extra || {}),
  };
  try {
    await transport.send({ jsonrpc: "2.0", id: c.id, method: "tools/call", params });
    const m = await answer;
    const r = m.result || {};
    out.push({
      id: m.id,
      text: (r.content || []).map((x) => x.text).join(""),
      resultType: r.resultType,
      serverName: r._meta?.["io.modelcontextprotocol/serverInfo"]?.name,
      error: m.error?.message,
    });
  } catch (e) {
    out.push({ id: c.id, error: "transport: " + String(e && e.message) });
  }
  await transport.close();
}
console.log(JSON.stringify(out));

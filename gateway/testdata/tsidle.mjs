// The TypeScript SDK's client against the gateway, idle between its
// calls: run as
//   node tsidle.mjs SDK_DIR URL CALLS PAUSE_MS
// It calls echo CALLS times, PAUSE_MS apart, and prints one JSON object
// with the texts it got back.
const [sdkDir, url, calls, pause] = process.argv.slice(2);
const { Client } = await import(sdkDir + "/dist/esm/client/index.js");
const { StreamableHTTPClientTransport } = await import(sdkDir + "/dist/esm/client/streamableHttp.js");

const client = new Client({ name: "ts-idle", version: "1.0.0" }, { capabilities: {} });
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);
const out = { version: transport.protocolVersion, echoes: [] };
for (let i = 0; i < Number(calls); i++) {
  await new Promise((r) => setTimeout(r, Number(pause)));
  const echo = await client.callTool({ name: "echo", arguments: { text: "call " + i } });
  out.echoes.push(echo.content.map((c) => c.text).join(""));
}
await transport.terminateSession().catch(() => {});
await client.close();
console.log(JSON.stringify(out));

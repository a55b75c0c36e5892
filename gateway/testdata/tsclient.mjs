// The TypeScript SDK's client against the gateway: run as
//   node tsclient.mjs SDK_DIR URL
// It lists the tools, calls echo, calls progress with a progress handler,
// calls book answering the elicitation, and prints one JSON object with
// what it saw.
const [sdkDir, url] = process.argv.slice(2);
const { Client } = await import(sdkDir + "/dist/esm/client/index.js");
const { StreamableHTTPClientTransport } = await import(sdkDir + "/dist/esm/client/streamableHttp.js");
const { ElicitRequestSchema } = await import(sdkDir + "/dist/esm/types.js");

const client = new Client({ name: "ts-client", version: "1.0.0" }, { capabilities: { elicitation: {} } });
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  asked.push(req.params.message);
  return { action: "accept", content: { guests: 4, seating: "inside" } };
});
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);
const out = { version: transport.protocolVersion, server: client.getServerVersion() };
out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
const echo = await client.callTool({ name: "echo", arguments: { text: "from ts" } });
out.echo = echo.content.map((c) => c.text).join("");
const progress = [];
const p = await client.callTool({ name: "progress", arguments: { steps: 3 } }, undefined, {
  onprogress: (n) => progress.push(n.progress),
});
out.progressResult = p.content.map((c) => c.text).join("");
out.progress = progress;
const book = await client.callTool({ name: "book", arguments: { date: "monday" } });
out.book = book.content.map((c) => c.text).join("");
out.asked = asked;
try {
  await client.callTool({ name: "nope", arguments: {} });
  out.unknown = "no error";
} catch (e) {
  out.unknown = String(e.message);
}
await transport.terminateSession().catch(() => {});
await client.close();
console.log(JSON.stringify(out));

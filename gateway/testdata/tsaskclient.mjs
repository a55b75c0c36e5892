// The TypeScript SDK's client asked questions by a gateway's shared
// session: run as
//   node tsaskclient.mjs SDK_DIR URL BEARER
// It calls brief (whose question is withdrawn: the handler waits for its
// abort), then q1 and q2 at once (answering each with its message), then
// all (roots/list and sampling/createMessage), and prints one JSON
// object with what it saw.
const [sdkDir, url, bearer] = process.argv.slice(2);
const { Client } = await import(sdkDir + "/dist/esm/client/index.js");
const { StreamableHTTPClientTransport } = await import(sdkDir + "/dist/esm/client/streamableHttp.js");
const { ElicitRequestSchema, ListRootsRequestSchema, CreateMessageRequestSchema } = await import(sdkDir + "/dist/esm/types.js");

const client = new Client({ name: "ts-ask-client", version: "1.0.0" }, { capabilities: { elicitation: {}, roots: {}, sampling: {} } });
const out = { ids: [], aborted: false };
client.setRequestHandler(ElicitRequestSchema, async (req, extra) => {
  out.ids.push(extra.requestId);
  if (req.params.message === "question brief") {
    await new Promise((resolve) => {
      const t = setTimeout(resolve, 5000);
      extra.signal.addEventListener("abort", () => { out.aborted = true; clearTimeout(t); resolve(); });
    });
    return { action: "decline" };
  }
  return { action: "accept", content: { answer: req.params.message } };
});
client.setRequestHandler(ListRootsRequestSchema, async (_req, extra) => {
  out.ids.push(extra.requestId);
  return { roots: [{ uri: "file:///ts" }] };
});
client.setRequestHandler(CreateMessageRequestSchema, async (_req, extra) => {
  out.ids.push(extra.requestId);
  return { model: "ts-model", role: "assistant", content: { type: "text", text: "ok" } };
});
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: "Bearer " + bearer } } });
await client.connect(transport);
const text = (r) => r.content.map((c) => c.text).join("");
try {
  out.brief = text(await client.callTool({ name: "brief", arguments: {} }));
} catch (e) {
  out.brief = "error: " + String(e.message);
}
const [q1, q2] = await Promise.all([
  client.callTool({ name: "q1", arguments: {} }),
  client.callTool({ name: "q2", arguments: {} }),
]);
out.q1 = text(q1);
out.q2 = text(q2);
out.all = text(await client.callTool({ name: "all", arguments: {} }));
await transport.terminateSession().catch(() => {});
await client.close();
console.log(JSON.stringify(out));

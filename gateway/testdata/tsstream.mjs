// The TypeScript SDK's client holding its session's standalone stream:
// run as
//   node tsstream.mjs SDK_DIR URL
// It connects (the SDK opens the stream, GET, after initializing) and
// prints {"session": ID}; once a notifications/tools/list_changed comes
// on the stream it lists the tools, ends its session and prints
// {"tools": [...], "gets": [{status, connection}]}, the answers to its
// GETs as its fetch saw them.
const [sdkDir, url] = process.argv.slice(2);
const { Client } = await import(sdkDir + "/dist/esm/client/index.js");
const { StreamableHTTPClientTransport } = await import(sdkDir + "/dist/esm/client/streamableHttp.js");
const { ToolListChangedNotificationSchema } = await import(sdkDir + "/dist/esm/types.js");

const gets = [];
const transport = new StreamableHTTPClientTransport(new URL(url), {
  fetch: async (u, init) => {
    const r = await fetch(u, init);
    if ((init?.method ?? "GET") === "GET") {
      gets.push({ status: r.status, connection: r.headers.get("connection") });
    }
    return r;
  },
});
const client = new Client({ name: "ts-stream", version: "1.0.0" });
let changed;
const got = new Promise((resolve) => {
  changed = resolve;
});
client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed());
await client.connect(transport);
console.log(JSON.stringify({ session: transport.sessionId }));
await got;
const tools = (await client.listTools()).tools.map((t) => t.name).sort();
await transport.terminateSession().catch(() => {});
await client.close();
console.log(JSON.stringify({ tools, gets }));

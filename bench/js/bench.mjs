// The @langchain/mcp-adapters side of mcpadapter's benchmarks: measures one
// workload with MultiServerMCPClient + tool.invoke (the package's documented
// API, default options) and prints one JSON result line on stdout, the same
// shape as bench/go. Run by bench/run.sh with Node 22:
//
//   node bench.mjs --workload W --server S [--testserver BIN] [--node NODE]
//       [--everything INDEX_JS] [--url URL] [--n N] [--inflight 64] [--ms 10]
//       [--iters 3] [--warmup 100]
//
// Workloads and servers are those of bench/go (see its doc comment).
import { MultiServerMCPClient } from "@langchain/mcp-adapters";

const opts = {
  workload: "echo",
  server: "go-stdio",
  testserver: "",
  node: process.execPath,
  everything: "",
  url: "",
  n: 0,
  inflight: 64,
  ms: 10,
  iters: 3,
  warmup: 100,
};
{
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--?/, "");
    if (!(key in opts) || i + 1 >= argv.length) {
      console.error(`bench.mjs: bad argument ${argv[i]}`);
      process.exit(2);
    }
    opts[key] = typeof opts[key] === "number" ? Number(argv[i + 1]) : argv[i + 1];
  }
}

// serverEntry is the MultiServerMCPClient entry of the server under test.
function serverEntry() {
  switch (opts.server) {
    case "go-stdio":
      return { transport: "stdio", command: opts.testserver, args: [] };
    case "everything":
      return { transport: "stdio", command: opts.node, args: [opts.everything, "stdio"] };
    case "go-http":
      return { transport: "http", url: opts.url };
  }
  throw new Error(`unknown server ${opts.server}`);
}

// connect creates a client for servers (name -> entry) and lists the tools:
// the "connect + list tools" of the workloads.
async function connect(servers, extra = {}) {
  const client = new MultiServerMCPClient({ mcpServers: servers, ...extra });
  const tools = await client.getTools();
  if (tools.length === 0) throw new Error("no tools listed");
  return { client, tools };
}

const single = () => connect({ s: serverEntry() });

function multi(k) {
  const servers = {};
  for (let i = 0; i < k; i++) {
    servers[`s${i}`] = { transport: "stdio", command: opts.testserver, args: [] };
  }
  // Prefixed names, as mcpadapter gives with several servers.
  return connect(servers, { prefixToolNameWithServerName: true });
}

function toolNamed(tools, name) {
  const t = tools.find((t) => t.name === name);
  if (!t) throw new Error(`no tool ${name}`);
  return t;
}

const msSince = (t0) => performance.now() - t0;

// cpuMs is this process's CPU time so far (user + system, all threads), in
// ms; the servers are other processes and are not counted.
function cpuMs() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function timeConnects(connector) {
  const times = [];
  let cpu = 0;
  for (let i = 0; i <= opts.iters; i++) {
    const c0 = cpuMs();
    const t0 = performance.now();
    const { client } = await connector();
    times.push(msSince(t0));
    if (i > 0) cpu += cpuMs() - c0;
    await client.close();
  }
  return {
    value: median(times.slice(1)),
    cold: times[0],
    cpu: cpu / opts.iters,
    unit: "ms",
    n: opts.iters,
  };
}

async function echo() {
  const n = opts.n || 2000;
  const { client, tools } = await single();
  try {
    const tool = toolNamed(tools, "echo");
    const args = opts.server === "everything" ? { message: "hello" } : { text: "hello" };
    for (let i = 0; i < opts.warmup; i++) await tool.invoke(args);
    const c0 = cpuMs();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await tool.invoke(args);
    const el = msSince(t0);
    const cpu = cpuMs() - c0;
    return { value: (el * 1000) / n, cpu: (cpu * 1000) / n, unit: "us/call", n };
  } finally {
    await client.close();
  }
}

async function slow() {
  if (opts.server === "everything") throw new Error("server-everything has no sleep tool");
  const n = opts.n || 256;
  const inflight = opts.workload === "slow1" ? 1 : opts.inflight;
  const { client, tools } = await single();
  try {
    const tool = toolNamed(tools, "slow");
    await tool.invoke({ ms: 0 });
    let next = 0;
    const worker = async () => {
      while (next++ < n) await tool.invoke({ ms: opts.ms });
    };
    const c0 = cpuMs();
    const t0 = performance.now();
    await Promise.all(Array.from({ length: inflight }, worker));
    const el = msSince(t0);
    return { value: el, cpu: cpuMs() - c0, unit: "ms", n };
  } finally {
    await client.close();
  }
}

async function rss8() {
  const { client, tools } = await multi(8);
  try {
    for (let i = 0; i < 8; i++) await toolNamed(tools, `s${i}__echo`).invoke({ text: "hello" });
    // maxRSS is in kilobytes: this process only, not the server children.
    return { value: process.resourceUsage().maxRSS / 1024, unit: "MiB" };
  } finally {
    await client.close();
  }
}

async function run() {
  switch (opts.workload) {
    case "connect":
      return timeConnects(single);
    case "discover8":
      return timeConnects(() => multi(8));
    case "echo":
      return echo();
    case "slow64":
    case "slow1":
      return slow();
    case "rss8":
      return rss8();
  }
  throw new Error(`unknown workload ${opts.workload}`);
}

const timer = setTimeout(() => {
  console.error("bench.mjs: timed out after 5 minutes");
  process.exit(1);
}, 5 * 60 * 1000);
timer.unref();

try {
  const r = await run();
  console.log(
    JSON.stringify({ client: "langchain", server: opts.server, workload: opts.workload, ...r }),
  );
  process.exit(0);
} catch (err) {
  console.error(`bench.mjs ${opts.server}/${opts.workload}:`, err);
  process.exit(1);
}

import { mkdtemp, rm } from "node:fs/promises";
import { Agent } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_INTEGRATION_ID } from "../src/control-plane/options.js";
import { type Answer, call, startServer, stopServer } from "./control-plane-client.js";

// Requests per second for GET and PATCH of one deployment with 1,000 stored (target ≥ 2,000 GET/s
// on 2 cores), and memory with 10,000 stored. The server runs in its own process
// (bench/control-plane-server.ts); this process is the load generator: node:http over a keep-alive
// agent with a bounded number of requests in flight (lighter per request than fetch, so the client
// takes less of the two cores from the server).

const GET_TARGET = 2000;
const CONCURRENCY = 32;
const GETS = 20_000;
const PATCHES = 6_000;

/** Runs `total` requests with at most `concurrency` in flight; answers per second and failures. */
async function rate(total: number, concurrency: number, send: (i: number) => Promise<Answer>) {
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const answer = await send(next++);
        if (answer.status >= 300) failures++;
      }
    }),
  );
  return { perSecond: Math.round(total / ((performance.now() - started) / 1000)), failures };
}

const createBody = (name: string) =>
  JSON.stringify({
    name,
    source: "gitrepo",
    source_config: { integration_id: DEFAULT_INTEGRATION_ID, repo_url: "https://git.example.com/a/b" },
    source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
    secrets: [{ name: "KEY", value: "v" }],
  });

async function seed(agent: Agent, url: URL, count: number): Promise<string[]> {
  const ids: string[] = [];
  await rate(count, CONCURRENCY, async (i) => {
    const answer = await call(agent, url, "POST", "/v2/deployments", createBody(`bench-${i}`));
    if (answer.status !== 201) throw new Error(`seeding failed: ${answer.status} ${answer.body}`);
    ids.push((JSON.parse(answer.body) as { id: string }).id);
    return answer;
  });
  return ids;
}

const fmt = (n: number) => n.toLocaleString("en-US");
const mb = (bytes: unknown) => `${Math.round(Number(bytes) / 1024 / 1024)} MB`;

async function throughput(label: string, mode: string, logging = false): Promise<string[]> {
  const server = await startServer(mode, logging);
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  try {
    const ids = await seed(agent, server.url, 1000);
    const path = (i: number) => `/v2/deployments/${ids[i % ids.length]}`;
    await rate(2_000, CONCURRENCY, (i) => call(agent, server.url, "GET", path(i))); // warm-up (JIT)
    // Server CPU per request is steadier than req/s on a shared machine; both are reported.
    const cpu = async () => Number((await server.ask("cpu")).micros);
    const c0 = await cpu();
    const get = await rate(GETS, CONCURRENCY, (i) => call(agent, server.url, "GET", path(i)));
    const c1 = await cpu();
    const patch = await rate(PATCHES, CONCURRENCY, (i) =>
      call(
        agent,
        server.url,
        "PATCH",
        path(i),
        JSON.stringify({ source_config: { install_command: `npm ci #${i}` } }),
      ),
    );
    const c2 = await cpu();
    const verdict = get.perSecond >= GET_TARGET ? "meets" : "BELOW";
    const each = (micros: number, n: number) => `${Math.round(micros / n)} µs server CPU each`;
    return [
      `GET   ${fmt(get.perSecond)} req/s, ${each(c1 - c0, GETS)} (${label}; target ≥ ${fmt(GET_TARGET)} req/s: ${verdict}), ${get.failures} failed`,
      `PATCH ${fmt(patch.perSecond)} req/s, ${each(c2 - c1, PATCHES)} (${label}), ${patch.failures} failed`,
    ];
  } finally {
    agent.destroy();
    await stopServer(server);
  }
}

async function memory(): Promise<string> {
  const server = await startServer("memory");
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  try {
    const empty = await server.ask("memory");
    await seed(agent, server.url, 10_000);
    const full = await server.ask("memory");
    const gc = full.gc ? "after GC" : "no --expose-gc";
    return `memory with 10,000 deployments (${gc}): RSS ${mb(full.rss)}, heap ${mb(full.heapUsed)} (empty server: RSS ${mb(empty.rss)}, heap ${mb(empty.heapUsed)})`;
  } finally {
    agent.destroy();
    await stopServer(server);
  }
}

export async function run(): Promise<string[]> {
  const lines = [
    `server in a child process, ${CONCURRENCY} keep-alive connections, 1,000 deployments stored`,
  ];
  const dataDir = await mkdtemp(join(tmpdir(), "plumb-bench-"));
  try {
    lines.push(...(await throughput("in memory", "memory")));
    lines.push(
      ...(await throughput(
        "durable --data, one fsync per batch of concurrent writes (group commit)",
        dataDir,
      )),
    );
    lines.push(...(await throughput("in memory, pino logging each request", "memory", true)));
    lines.push(await memory());
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
  return lines;
}

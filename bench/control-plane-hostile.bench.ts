import { randomBytes } from "node:crypto";
import { Agent } from "node:http";
import { call, startServer, stopServer } from "./control-plane-client.js";

// Issue 10: 40,000 requests with random 8 KB keys once took the server from 84 MB to 384 MB RSS
// (a rate-limit bucket per key presented). Now only granted keys get buckets and failures are
// limited per address in a bounded table. Reported: RSS growth (after a full GC) from 40,000
// random-key requests against the baseline of 40,000 requests with the valid key, same run.
// Target: under 30 MB.

const REQUESTS = 40_000;
const CONCURRENCY = 32;
const TARGET_MB = 30;

async function growth(send: (agent: Agent, url: URL) => Promise<number>) {
  const server = await startServer("memory");
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  try {
    const before = (await server.ask("memory")) as { rss: number };
    const statuses = new Map<number, number>();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next++ < REQUESTS) {
          const status = await send(agent, server.url);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      }),
    );
    const after = (await server.ask("memory")) as { rss: number };
    const mb = (after.rss - before.rss) / 1024 / 1024;
    const answers = [...statuses].map(([status, n]) => `${n} × ${status}`).join(", ");
    return {
      mb,
      line: `RSS ${(before.rss / 1048576).toFixed(0)} → ${(after.rss / 1048576).toFixed(0)} MB (+${mb.toFixed(1)} MB); ${answers}`,
    };
  } finally {
    agent.destroy();
    await stopServer(server);
  }
}

export async function run(): Promise<string[]> {
  const path = "/v2/deployments?limit=1";
  const valid = await growth(async (agent, url) => (await call(agent, url, "GET", path)).status);
  const hostile = await growth(
    async (agent, url) =>
      (await call(agent, url, "GET", path, undefined, { "x-api-key": randomBytes(4096).toString("hex") }))
        .status,
  );
  const verdict = hostile.mb < TARGET_MB ? "ok" : "OVER TARGET";
  return [
    `${REQUESTS} requests with the valid key (baseline): ${valid.line}`,
    `${REQUESTS} requests with random 8 KB keys: ${hostile.line} (target growth < ${TARGET_MB} MB) ${verdict}`,
  ];
}

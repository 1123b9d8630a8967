import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_API_KEY, DEFAULT_INTEGRATION_ID } from "../src/control-plane/options.js";
import { startControlPlane } from "../src/control-plane/server.js";

// Requests per second for GET and PATCH with 1,000 deployments stored (target ≥ 2,000 GET/s),
// and heap used with 10,000 deployments. A bounded loop of concurrent keep-alive fetches.

const headers = { "x-api-key": DEFAULT_API_KEY, "content-type": "application/json" };
const body = (name: string) =>
  JSON.stringify({
    name,
    source: "gitrepo",
    source_config: { integration_id: DEFAULT_INTEGRATION_ID, repo_url: "https://git.example.com/a/b" },
    source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
    secrets: [{ name: "KEY", value: "v" }],
  });

async function seed(url: string, count: number, concurrency = 32): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const r = await fetch(`${url}/v2/deployments`, { method: "POST", headers, body: body(`bench-${i}`) });
        ids.push(((await r.json()) as { id: string }).id);
      }
    }),
  );
  return ids;
}

async function rate(total: number, concurrency: number, request: (i: number) => Promise<Response>) {
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const r = await request(next++);
        await r.arrayBuffer();
        if (!r.ok) failures++;
      }
    }),
  );
  return { perSecond: Math.round(total / ((performance.now() - started) / 1000)), failures };
}

const unlimited = { "Default (API key)": { count: 1e9, intervalSeconds: 10 } };

export async function run(): Promise<string[]> {
  const lines: string[] = [];
  const dataDir = await mkdtemp(join(tmpdir(), "plumb-bench-"));
  try {
    for (const [label, dir] of [
      ["memory", undefined],
      ["durable --data", dataDir],
    ] as const) {
      const cp = await startControlPlane({ rateLimits: unlimited, revisionSeconds: 0, dataDir: dir });
      const ids = await seed(cp.url, 1000);
      const get = await rate(10_000, 32, (i) =>
        fetch(`${cp.url}/v2/deployments/${ids[i % ids.length]}`, { headers }),
      );
      const patch = await rate(3_000, 32, (i) =>
        fetch(`${cp.url}/v2/deployments/${ids[i % ids.length]}`, {
          method: "PATCH",
          headers,
          body: JSON.stringify({ source_config: { install_command: `npm ci #${i}` } }),
        }),
      );
      lines.push(
        `GET  ${get.perSecond} req/s with 1,000 deployments (${label}; target ≥ 2,000), ${get.failures} failed`,
      );
      lines.push(
        `PATCH ${patch.perSecond} req/s with 1,000 deployments (${label}), ${patch.failures} failed`,
      );
      await cp.stop();
    }
    global.gc?.();
    const before = process.memoryUsage().heapUsed;
    const cp = await startControlPlane({ rateLimits: unlimited, revisionSeconds: 0 });
    await seed(cp.url, 10_000, 64);
    global.gc?.();
    const after = process.memoryUsage().heapUsed;
    lines.push(
      `heap +${Math.round((after - before) / 1024 / 1024)} MB with 10,000 deployments (rss ${Math.round(process.memoryUsage().rss / 1024 / 1024)} MB)`,
    );
    await cp.stop();
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
  return lines;
}

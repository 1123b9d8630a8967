import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyQuietly, writeContainerManifests } from "./apply-fixtures.js";
import { startControlPlane } from "../src/control-plane/server.js";
import { baselineRatio } from "./baseline.js";

// `plumb apply` of 1,000 changed deployments with zero-time revisions, against the local control
// plane's real rate limit (Default (API key): 1000 requests / 10 s). Reports the share of that
// budget apply uses while it talks to the API (requests / time from its first request to its last;
// target ≥ 95%, zero 429s), and the wall time with loading, planning and the last records.

const N = 1000;
const BUDGET_PER_SECOND = 1000 / 10;

const writeAll = (root: string, tag: string) => writeContainerManifests(root, N, "bench-apply", tag);

type Count = { requests: number; status429: number; first?: number; last?: number };

async function apply(url: string, root: string, count: Count): Promise<number> {
  const counting: typeof fetch = async (input, init) => {
    count.requests += 1;
    count.first ??= performance.now();
    count.last = performance.now();
    const response = await fetch(input, init);
    if (response.status === 429) count.status429 += 1;
    return response;
  };
  return applyQuietly(url, root, counting);
}

export async function run(): Promise<string[]> {
  const dataDir = await mkdtemp(join(tmpdir(), "plumb-apply-bench-"));
  const root = join(dataDir, "manifests");
  try {
    // Seed without a rate limit (not measured), then restart on the same data with the real one.
    const unlimited = { "Default (API key)": { count: 1e9, intervalSeconds: 10 } };
    const seeding = await startControlPlane({
      rateLimits: unlimited,
      revisionSeconds: 0,
      deploymentReadySeconds: 0,
      dataDir,
    });
    await writeAll(root, "1");
    const seeded = await apply(seeding.url, root, { requests: 0, status429: 0 });
    await seeding.stop();
    if (seeded !== 0) return [`seeding failed (exit ${seeded})`];

    const cp = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0, dataDir });
    await writeAll(root, "2");
    const count: Count = { requests: 0, status429: 0 };
    const started = performance.now();
    const exit = await apply(cp.url, root, count);
    const seconds = (performance.now() - started) / 1000;
    await cp.stop();
    const talking = ((count.last ?? 0) - (count.first ?? 0)) / 1000;
    const share = count.requests / talking / BUDGET_PER_SECOND;
    return [
      `apply ${N} changed deployments: ${seconds.toFixed(1)} s wall ${await baselineRatio(seconds * 1000)}, exit ${exit}`,
      `${count.requests} requests in ${talking.toFixed(1)} s from the first to the last: ${(count.requests / talking).toFixed(1)}/s = ${(share * 100).toFixed(0)}% of the 1000/10 s budget (target ≥ 95%), ${count.status429} × 429 (target 0) ${share >= 0.95 && count.status429 === 0 ? "OK" : "MISSED"}`,
    ];
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

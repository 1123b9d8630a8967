import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildEnvironmentsTree, ENVIRONMENTS } from "./environments-fixtures.js";

// The controller's memory for the environments bench's tree (issue 26: < 300 MB): 1,000 Deployment
// files in 3 environments (3,000 objects, staging and prod on one control plane, onprem on
// another), the built CLI in its own process on this machine's node without flags, from start
// until every environment has settled (100 updates each, the rest found in sync) and through one
// drift sweep of all 3,000.

const COUNT = 1000;
const TARGET_MB = 300;
const LIMIT_MS = 240_000;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const get = (url: string) =>
  fetch(url, { signal: AbortSignal.timeout(5_000) }).then(
    async (r) => r.text(),
    () => "",
  );

/** Sum of plumb_reconcile_total with reason="drift", whatever its other labels. */
const driftReconciles = (metrics: string) =>
  [...metrics.matchAll(/^plumb_reconcile_total\{[^}]*reason="drift"[^}]*\} (\d+)/gm)].reduce(
    (sum, m) => sum + Number(m[1]),
    0,
  );

type Status = { environments?: Array<{ settled: boolean }> };

export async function run(): Promise<string[]> {
  const root = await mkdtemp(join(tmpdir(), "plumb-environments-rss-"));
  const tree = await buildEnvironmentsTree(root, COUNT);
  const main = join(dirname(fileURLToPath(import.meta.url)), "..", "src", "cli", "main.js");
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    process.execPath,
    [
      ...[main, "controller", "--dir", tree.dir, "--listen", `127.0.0.1:${port}`],
      ...["--concurrency", "32", "--api-rate-limit", "1000000/10s", "--poll-interval", "20ms"],
      ...["--drift-schedule", "*/10 * * * * *"],
    ],
    {
      env: { ...process.env, NODE_OPTIONS: "", ...tree.env, PLUMB_LOG_LEVEL: "warn" },
      stdio: "ignore",
    },
  );
  const started = performance.now();
  let peak = 0;
  let peakAtSettled = 0;
  let settledMs: number | undefined;
  let sweptMs: number | undefined;
  let sampling = true;
  const sampler = (async () => {
    while (sampling && child.exitCode === null) {
      const status = await readFile(`/proc/${child.pid}/status`, "utf8").catch(() => "");
      peak = Math.max(peak, Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  try {
    while (performance.now() < started + LIMIT_MS && child.exitCode === null && sweptMs === undefined) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      if (settledMs === undefined) {
        const status = JSON.parse((await get(`${url}/status`)) || "{}") as Status;
        const environments = status.environments ?? [];
        if (environments.length === ENVIRONMENTS.length && environments.every((e) => e.settled)) {
          settledMs = performance.now() - started;
          peakAtSettled = peak;
        }
      } else if (driftReconciles(await get(`${url}/metrics`)) >= COUNT * ENVIRONMENTS.length)
        sweptMs = performance.now() - started;
    }
  } finally {
    sampling = false;
    await sampler;
    child.kill("SIGTERM");
    await new Promise((resolve) => (child.exitCode === null ? child.once("exit", resolve) : resolve(null)));
    await tree.stop();
    await rm(root, { recursive: true, force: true });
  }
  const s = (ms: number | undefined) => (ms === undefined ? "not reached" : `${(ms / 1000).toFixed(1)} s`);
  const ok = peak > 0 && peak < TARGET_MB && sweptMs !== undefined;
  return [
    `controller, ${ENVIRONMENTS.length} environments × ${COUNT} deployments (Node ${process.versions.node}, no flags): every environment settled after ${s(settledMs)}, drift sweep of all ${COUNT * ENVIRONMENTS.length} done after ${s(sweptMs)}`,
    `  peak RSS until settled ${peakAtSettled.toFixed(0)} MB, through the drift sweep ${peak.toFixed(0)} MB (target < ${TARGET_MB} MB) ${ok ? "OK" : "MISSED"}`,
  ];
}

import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_API_KEY } from "../src/control-plane/options.js";
import { startControlPlane } from "../src/control-plane/server.js";
import { parseMemoryQuantity } from "../src/cli/memory-limit.js";
import { controllerManifest as manifest } from "./controller-fixtures.js";

// The controller's RSS with 10,000 manifests (target < 200 MB without node flags, < 150 MB as
// examples/kubernetes runs it), from start through one drift sweep of every object, measured on
// the built CLI in its own process: on Node 24 (the supported runtime) and on this machine's node.

/** A TCP port that was free a moment ago (the CLI needs a fixed --listen to be polled). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Sum of plumb_reconcile_total{reason=...} in a /metrics text. */
const reconciles = (metrics: string, reason: string) =>
  [
    ...metrics.matchAll(new RegExp(`^plumb_reconcile_total\\{reason="${reason}",[^}]*\\} (\\d+)`, "gm")),
  ].reduce((sum, m) => sum + Number(m[1]), 0);

const get = (url: string) =>
  fetch(url, { signal: AbortSignal.timeout(5_000) }).then(
    async (r) => ({ status: r.status, text: await r.text() }),
    () => ({ status: 0, text: "" }),
  );

/** 10,000 manifests, one file each as teams keep them, 100 per team directory. */
async function writeManifests(count: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "plumb-bench-rss-"));
  for (let team = 0; team < count / 100; team++) {
    await mkdir(join(dir, `team-${team}`));
    for (let i = 0; i < 100; i++)
      await writeFile(join(dir, `team-${team}`, `agent-${i}.yaml`), manifest(`rss-${team * 100 + i}`, "1"));
  }
  return dir;
}

/** The memory limit of the Kubernetes example's controller, as its downward API hands it over. */
async function kubernetesMemoryLimit(): Promise<string> {
  const file = join(
    dirname(fileURLToPath(import.meta.url)),
    "..",
    "..",
    "examples",
    "kubernetes",
    "controller.yaml",
  );
  const match = /limits: \{ memory: (\S+) \}/.exec(await readFile(file, "utf8"));
  const bytes = match && parseMemoryQuantity(match[1]!);
  if (!bytes) throw new Error(`no limits.memory in ${file}`);
  return String(bytes);
}

type RssRun = { readyMs?: number; sweptMs?: number; peakAtReady: number; peak: number };

/**
 * RSS of the built CLI controller on `dir` (a fresh control plane, its own status directory): the
 * peak from start until /status says settled (every object created, its revision DEPLOYED) and through
 * one drift sweep of every object. The control plane's and the client's rate limits are raised so
 * this takes seconds instead of the ~40 s per 1,000 objects the API's default budget allows.
 */
async function rssRun(
  dir: string,
  count: number,
  limitMs: number,
  node: string,
  env: Record<string, string>,
): Promise<RssRun> {
  const cp = await startControlPlane({
    revisionSeconds: 0,
    deploymentReadySeconds: 0,
    rateLimits: { "Default (API key)": { count: 1e9, intervalSeconds: 10 } },
  });
  const statusDir = await mkdtemp(join(tmpdir(), "plumb-bench-rss-status-"));
  const main = join(dirname(fileURLToPath(import.meta.url)), "..", "src", "cli", "main.js");
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const args = [
    ...["controller", "--dir", dir, "--status-dir", statusDir, "--listen", `127.0.0.1:${port}`],
    ...["--concurrency", "32", "--api-rate-limit", "1000000/10s", "--poll-interval", "20ms"],
    ...["--drift-schedule", "*/10 * * * * *"], // with seconds: a sweep soon after ready
  ];
  const child = spawn(node, [main, ...args], {
    env: {
      ...process.env,
      NODE_OPTIONS: "",
      ...env,
      PLUMB_API_URL: cp.url,
      PLUMB_API_KEY: DEFAULT_API_KEY,
      PLUMB_LOG_LEVEL: "warn",
    },
    stdio: "ignore",
  });
  const started = performance.now();
  const run: RssRun = { peakAtReady: 0, peak: 0 };
  let sampling = true;
  const sampler = (async () => {
    while (sampling && child.exitCode === null) {
      const status = await readFile(`/proc/${child.pid}/status`, "utf8").catch(() => "");
      run.peak = Math.max(run.peak, Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  try {
    while (performance.now() < started + limitMs && child.exitCode === null && run.sweptMs === undefined) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      if (run.readyMs === undefined) {
        if ((JSON.parse((await get(`${url}/status`)).text || "{}") as { settled?: boolean }).settled) {
          run.readyMs = performance.now() - started;
          run.peakAtReady = run.peak;
        }
      } else if (reconciles((await get(`${url}/metrics`)).text, "drift") >= count)
        run.sweptMs = performance.now() - started;
    }
  } finally {
    sampling = false;
    await sampler;
    child.kill("SIGTERM");
    await new Promise((resolve) => (child.exitCode === null ? child.once("exit", resolve) : resolve(null)));
    await cp.stop();
    await rm(statusDir, { recursive: true, force: true });
  }
  return run;
}

/** Node 24 (the supported runtime) from the registry, as .ci/run gets it; undefined when offline. */
function node24(): string | undefined {
  if (process.versions.node.startsWith("24.")) return process.execPath;
  const found = spawnSync("npx", ["-y", "node@24", "-p", "process.execPath"], { encoding: "utf8" });
  const path = found.stdout?.trim().split("\n").at(-1);
  return path && existsSync(path) ? path : undefined;
}

async function rss(count: number, limitMs: number): Promise<string[]> {
  const dir = await writeManifests(count);
  const n = count.toLocaleString("en");
  const s = (ms: number | undefined) => (ms === undefined ? "not reached" : `${(ms / 1000).toFixed(1)} s`);
  const lines: string[] = [];
  try {
    const limit = await kubernetesMemoryLimit();
    const supported = node24();
    const runs: Array<[string, string | undefined, Record<string, string>, number]> = [
      [`Node 24, no flags (plumb sets its own heap settings)`, supported, {}, 200],
      [
        `Node 24, as examples/kubernetes runs it (PLUMB_MEMORY_LIMIT=${limit}, its limits.memory)`,
        supported,
        { PLUMB_MEMORY_LIMIT: limit },
        150,
      ],
      [`Node ${process.versions.node} (this machine's), no flags`, process.execPath, {}, 200],
    ];
    for (const [label, node, env, target] of runs) {
      if (!node) {
        lines.push(`controller, ${n} manifests, ${label}: not measured (Node 24 could not be installed)`);
        continue;
      }
      const run = await rssRun(dir, count, limitMs, node, env);
      const ok = run.peak > 0 && run.peak < target && run.sweptMs !== undefined;
      lines.push(
        `controller, ${n} manifests, ${label}: ready (all created and DEPLOYED) after ${s(run.readyMs)}, drift sweep of all done after ${s(run.sweptMs)}`,
        `  peak RSS until ready ${run.peakAtReady.toFixed(0)} MB, through the drift sweep ${run.peak.toFixed(0)} MB (target < ${target} MB) ${ok ? "OK" : "MISSED"}`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return lines;
}

export async function run(): Promise<string[]> {
  return rss(10_000, 150_000);
}

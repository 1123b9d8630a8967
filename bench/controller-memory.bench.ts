import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_API_KEY } from "../src/control-plane/options.js";
import { startControlPlane } from "../src/control-plane/server.js";
import { parseMemoryQuantity } from "../src/cli/controller/memory-limit.js";
import { controllerManifest as manifest } from "./controller-fixtures.js";

// The controller's RSS with 10,000 manifests (target < 200 MB without node flags, < 150 MB as
// examples/kubernetes runs it), from start through one drift sweep of every object, measured on
// the built CLI in its own process: on Node 24 (the supported runtime) and on this machine's node.
// Two cases: a first start (every deployment created) and a restart (9,960 already live, their
// status kept). PLUMB_BENCH_RSS=fresh or =restart runs only one of them.

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

/** Manifests `from` to `to` - 1 in `dir`, one file each as teams keep them, 100 per team directory. */
async function writeManifests(dir: string, from: number, to: number): Promise<void> {
  for (let i = from; i < to; i++) {
    const team = join(dir, `team-${Math.floor(i / 100)}`);
    if (i % 100 === 0 || i === from) await mkdir(team, { recursive: true });
    await writeFile(join(team, `agent-${i % 100}.yaml`), manifest(`rss-${i}`, "1"));
  }
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

/** A control plane fast enough for 10,000 objects: no waits for revisions, its rate limit out of the way. */
const fastControlPlane = (dataDir?: string) =>
  startControlPlane({
    revisionSeconds: 0,
    deploymentReadySeconds: 0,
    rateLimits: { "Default (API key)": { count: 1e9, intervalSeconds: 10 } },
    dataDir,
  });

type RssTarget = {
  /** The control plane the controller reconciles against. */
  api: string;
  /** Its status directory (kept from an earlier run for a restart). */
  statusDir: string;
  /** Stop once settled (seeding) rather than after the first drift sweep. */
  untilSettled?: boolean;
};

/**
 * RSS of the built CLI controller on `dir`: the peak from start until /status says settled (every
 * object reconciled once: created with its revision DEPLOYED, or found up to date) and through one
 * drift sweep of every object. The control plane's and the client's rate limits are raised so this
 * takes seconds instead of the ~40 s per 1,000 objects the API's default budget allows. Peak: the
 * larger of RSS sampled every 100 ms and the kernel's own high-water mark (VmHWM) at the last sample.
 */
async function rssRun(
  dir: string,
  count: number,
  limitMs: number,
  node: string,
  env: Record<string, string>,
  target: RssTarget,
): Promise<RssRun> {
  const main = join(dirname(fileURLToPath(import.meta.url)), "..", "src", "cli", "main.js");
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const args = [
    ...["controller", "--dir", dir, "--status-dir", target.statusDir, "--listen", `127.0.0.1:${port}`],
    ...["--concurrency", "32", "--api-rate-limit", "1000000/10s", "--poll-interval", "20ms"],
    ...["--drift-schedule", "*/10 * * * * *"], // with seconds: a sweep soon after ready
  ];
  const child = spawn(node, [main, ...args], {
    env: {
      ...process.env,
      NODE_OPTIONS: "",
      ...env,
      PLUMB_API_URL: target.api,
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
      const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
      run.peak = Math.max(run.peak, kb("VmRSS") / 1024, kb("VmHWM") / 1024);
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
          if (target.untilSettled) break;
        }
      } else if (reconciles((await get(`${url}/metrics`)).text, "drift") >= count)
        run.sweptMs = performance.now() - started;
    }
  } finally {
    sampling = false;
    await sampler;
    child.kill("SIGTERM");
    await new Promise((resolve) => (child.exitCode === null ? child.once("exit", resolve) : resolve(null)));
  }
  return run;
}

/** A fresh control plane and status directory for one run. */
async function freshRun(
  dir: string,
  count: number,
  limitMs: number,
  node: string,
  env: Record<string, string>,
): Promise<RssRun> {
  const cp = await fastControlPlane();
  const statusDir = await mkdtemp(join(tmpdir(), "plumb-bench-rss-status-"));
  try {
    return await rssRun(dir, count, limitMs, node, env, { api: cp.url, statusDir });
  } finally {
    await cp.stop();
    await rm(statusDir, { recursive: true, force: true });
  }
}

/** Node 24 (the supported runtime) from the registry, as .ci/run gets it; undefined when offline. */
function node24(): string | undefined {
  if (process.versions.node.startsWith("24.")) return process.execPath;
  const found = spawnSync("npx", ["-y", "node@24", "-p", "process.execPath"], { encoding: "utf8" });
  const path = found.stdout?.trim().split("\n").at(-1);
  return path && existsSync(path) ? path : undefined;
}

type Case = { label: string; node: string | undefined; env: Record<string, string>; target: number };

/** Node 24 without flags and as examples/kubernetes runs it, and this machine's node without flags. */
async function cases(): Promise<Case[]> {
  const limit = await kubernetesMemoryLimit();
  const supported = node24();
  return [
    { label: `Node 24, no flags (plumb sets its own heap settings)`, node: supported, env: {}, target: 200 },
    {
      label: `Node 24, as examples/kubernetes runs it (PLUMB_MEMORY_LIMIT=${limit}, its limits.memory)`,
      node: supported,
      env: { PLUMB_MEMORY_LIMIT: limit },
      target: 150,
    },
    {
      label: `Node ${process.versions.node} (this machine's), no flags`,
      node: process.execPath,
      env: {},
      target: 200,
    },
  ];
}

const seconds = (ms: number | undefined) =>
  ms === undefined ? "not reached" : `${(ms / 1000).toFixed(1)} s`;

/** The two lines of one run: its times, then its peaks against the target. */
function report(what: string, c: Case, run: RssRun): string[] {
  const ok = run.peak > 0 && run.peak < c.target && run.sweptMs !== undefined;
  return [
    `${what}, ${c.label}: ready (every object reconciled once) after ${seconds(run.readyMs)}, drift sweep of all done after ${seconds(run.sweptMs)}`,
    `  peak RSS until ready ${run.peakAtReady.toFixed(0)} MB, through the drift sweep ${run.peak.toFixed(0)} MB (target < ${c.target} MB) ${ok ? "OK" : "MISSED"}`,
  ];
}

/** A first start: every manifest created. */
async function fresh(count: number, limitMs: number): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), "plumb-bench-rss-"));
  const lines: string[] = [];
  try {
    await writeManifests(dir, 0, count);
    for (const c of await cases()) {
      const what = `controller, ${count.toLocaleString("en")} manifests`;
      if (!c.node) lines.push(`${what}, ${c.label}: not measured (Node 24 could not be installed)`);
      else lines.push(...report(what, c, await freshRun(dir, count, limitMs, c.node, c.env)));
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return lines;
}

/**
 * A restart: `live` of the `count` manifests were created by an earlier controller whose status
 * directory is kept (as --status-branch or a volume keeps it), the rest are new. Seeded once (the
 * control plane's journal in a data directory, and the status directory), copied for each run.
 */
async function restart(count: number, live: number, limitMs: number): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), "plumb-bench-rss-"));
  const dataDir = await mkdtemp(join(tmpdir(), "plumb-bench-rss-data-"));
  const statusDir = await mkdtemp(join(tmpdir(), "plumb-bench-rss-status-"));
  const what = `controller restart, ${count.toLocaleString("en")} manifests with ${live.toLocaleString("en")} live`;
  const lines: string[] = [];
  try {
    await writeManifests(dir, 0, live);
    const seeding = await fastControlPlane(dataDir);
    const seedMs = limitMs * 2; // a first start, on a node without plumb's restart in place
    const target = { api: seeding.url, statusDir, untilSettled: true };
    const seeded = await rssRun(dir, live, seedMs, process.execPath, {}, target).finally(() =>
      seeding.stop(),
    );
    if (seeded.readyMs === undefined)
      return [`${what}: not measured (seeding did not settle within ${seconds(seedMs)})`];
    lines.push(
      `${what}: seeded (${live.toLocaleString("en")} created and DEPLOYED) in ${seconds(seeded.readyMs)}`,
    );
    await writeManifests(dir, live, count);
    for (const c of await cases()) {
      if (!c.node) {
        lines.push(`${what}, ${c.label}: not measured (Node 24 could not be installed)`);
        continue;
      }
      const runData = await mkdtemp(join(tmpdir(), "plumb-bench-rss-data-"));
      const runStatus = await mkdtemp(join(tmpdir(), "plumb-bench-rss-status-"));
      await cp(dataDir, runData, { recursive: true });
      await cp(statusDir, runStatus, { recursive: true });
      const controlPlane = await fastControlPlane(runData);
      try {
        const run = await rssRun(dir, count, limitMs, c.node, c.env, {
          api: controlPlane.url,
          statusDir: runStatus,
        });
        lines.push(...report(what, c, run));
      } finally {
        await controlPlane.stop();
        await rm(runData, { recursive: true, force: true });
        await rm(runStatus, { recursive: true, force: true });
      }
    }
  } finally {
    for (const d of [dir, dataDir, statusDir]) await rm(d, { recursive: true, force: true });
  }
  return lines;
}

export async function run(): Promise<string[]> {
  const only = process.env.PLUMB_BENCH_RSS; // "fresh" or "restart": one of the two cases
  return [
    ...(only === "restart" ? [] : await fresh(10_000, 150_000)),
    ...(only === "fresh" ? [] : await restart(10_000, 9_960, 600_000)), // a time limit, not a target
  ];
}

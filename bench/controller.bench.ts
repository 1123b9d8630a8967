import { execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { pino } from "pino";
import { type Controller, startController } from "../src/controller/controller.js";
import { signBody } from "../src/controller/webhook.js";
import { DEFAULT_API_KEY } from "../src/control-plane/options.js";
import { startControlPlane, type RunningControlPlane } from "../src/control-plane/server.js";

// Controller speed: latency from a file save (and from git push + webhook) to the PATCH reaching the
// control plane, p50/p95 over 50 edits (target p95 < 1 s; Argo CD polls every 120-180 s, Flux every
// 1-10 min), and the controller's RSS with 10,000 manifests (target < 200 MB), measured on the
// built CLI in its own process.

const EDITS = 50;
const exec = promisify(execFile);

const manifest = (name: string, tag: string) =>
  `apiVersion: plumb/v1\nkind: Deployment\nmetadata: { name: ${name} }\nspec:\n  source: internal_container\n  source_revision_config: { image_uri: "registry.example/${name}:${tag}" }\n`;

/** A pass-through proxy in front of the control plane that timestamps every PATCH as it arrives. */
async function patchRecorder(
  target: string,
): Promise<{ url: string; patches: number[]; close(): Promise<void> }> {
  const patches: number[] = [];
  const server: Server = createServer((req, res) => {
    if (req.method === "PATCH") patches.push(performance.now());
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => !["host", "connection", "content-length"].includes(k)),
      ) as Record<string, string>;
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      fetch(`${target}${req.url}`, { method: req.method, headers, ...(body ? { body } : {}) })
        .then(async (r) => {
          const text = Buffer.from(await r.arrayBuffer());
          res.writeHead(r.status, { "content-type": r.headers.get("content-type") ?? "application/json" });
          res.end(text);
        })
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    patches,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

async function settle(controller: Controller): Promise<void> {
  while (controller.status().queue.running > 0 || controller.status().queue.pending > 0)
    await new Promise((resolve) => setTimeout(resolve, 5));
}

async function latency(cp: RunningControlPlane, mode: "save" | "push"): Promise<number[]> {
  const tmp = await mkdtemp(join(tmpdir(), `plumb-bench-ctl-${mode}-`));
  const proxy = await patchRecorder(cp.url);
  const work = join(tmp, "work");
  const git = (...args: string[]) =>
    exec("git", ["-c", "user.name=b", "-c", "user.email=b@example.com", ...args], { cwd: work });
  await mkdir(work, { recursive: true });
  await writeFile(join(work, "agent.yaml"), manifest(`bench-${mode}`, "0"));
  if (mode === "push") {
    await exec("git", ["init", "--bare", "-b", "main", join(tmp, "bare.git")]);
    await git("init", "-b", "main");
    await git("add", ".");
    await git("commit", "-m", "0");
    await git("remote", "add", "origin", join(tmp, "bare.git"));
    await git("push", "origin", "main");
  }
  const controller = await startController({
    source:
      mode === "save"
        ? { kind: "dir", dir: work }
        : {
            kind: "git",
            url: join(tmp, "bare.git"),
            branch: "main",
            workDir: join(tmp, "checkout"),
            intervalMs: 3_600_000,
          },
    api: { apiUrl: proxy.url, apiKey: DEFAULT_API_KEY, platformUrl: proxy.url },
    listen: { host: "127.0.0.1", port: 0 },
    webhookSecret: "bench",
    selfHeal: false,
    concurrency: 8,
    debounceMs: 200, // the CLI default
    backoffBaseMs: 5_000,
    backoffMaxMs: 60_000,
    timeoutMs: 60_000,
    pollIntervalMs: 50,
    env: process.env,
    logger: pino({ level: "silent" }),
  });
  const samples: number[] = [];
  try {
    while (!controller.ready()) await new Promise((resolve) => setTimeout(resolve, 10));
    for (let i = 1; i <= EDITS; i++) {
      const index = proxy.patches.length; // each edit makes exactly one PATCH: wait for this one, not a late earlier one
      const started = performance.now();
      await writeFile(join(work, "agent.yaml"), manifest(`bench-${mode}`, String(i)));
      if (mode === "push") {
        await git("commit", "-qam", String(i));
        await git("push", "-q", "origin", "main");
        const body = JSON.stringify({ ref: "refs/heads/main" });
        await fetch(`${controller.url}/hooks/git`, {
          method: "POST",
          headers: { "x-hub-signature-256": signBody("bench", body) },
          body,
        });
      }
      while (proxy.patches.length <= index) await new Promise((resolve) => setTimeout(resolve, 1));
      samples.push(proxy.patches[index]! - started);
      await settle(controller);
    }
  } finally {
    await controller.stop(2_000);
    await proxy.close();
    await rm(tmp, { recursive: true, force: true });
  }
  return samples;
}

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

/** The NODE_OPTIONS the Kubernetes example runs the controller with (its heap cap). */
async function kubernetesNodeOptions(): Promise<string> {
  const file = join(
    dirname(fileURLToPath(import.meta.url)),
    "..",
    "..",
    "examples",
    "kubernetes",
    "controller.yaml",
  );
  const match = /name: NODE_OPTIONS\s+value: (.+)/.exec(await readFile(file, "utf8"));
  if (!match) throw new Error(`no NODE_OPTIONS in ${file}`);
  return match[1]!.trim();
}

type RssRun = { readyMs?: number; sweptMs?: number; peakAtReady: number; peak: number };

/**
 * RSS of the built CLI controller on `dir` (a fresh control plane, its own status directory): the
 * peak from start until /readyz turns 200 (every object created, its revision DEPLOYED) and through
 * one drift sweep of every object. The control plane's and the client's rate limits are raised so
 * this takes seconds instead of the ~40 s per 1,000 objects the API's default budget allows.
 */
async function rssRun(dir: string, count: number, limitMs: number, nodeOptions: string): Promise<RssRun> {
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
  const child = spawn(process.execPath, [main, ...args], {
    env: {
      ...process.env,
      NODE_OPTIONS: nodeOptions,
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
        if ((await get(`${url}/readyz`)).status === 200) {
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

async function rss(count: number, limitMs: number): Promise<string[]> {
  const dir = await writeManifests(count);
  const n = count.toLocaleString("en");
  const s = (ms: number | undefined) => (ms === undefined ? "not reached" : `${(ms / 1000).toFixed(1)} s`);
  const lines: string[] = [];
  try {
    const capped = await kubernetesNodeOptions();
    for (const [label, nodeOptions] of [
      [`as examples/kubernetes runs it (NODE_OPTIONS=${capped})`, capped],
      ["with node's default heap sizing (no cap: V8 lets garbage grow on a large machine)", ""],
    ] as const) {
      const run = await rssRun(dir, count, limitMs, nodeOptions);
      const ok = run.peak > 0 && run.peak < 200 && run.sweptMs !== undefined;
      lines.push(
        `controller, ${n} manifests, ${label}: ready (all created and DEPLOYED) after ${s(run.readyMs)}, drift sweep of all done after ${s(run.sweptMs)}`,
        `  peak RSS until ready ${run.peakAtReady.toFixed(0)} MB, through the drift sweep ${run.peak.toFixed(0)} MB (target < 200 MB) ${ok ? "OK" : "MISSED"}`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return lines;
}

export async function run(): Promise<string[]> {
  const cp = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
  const lines: string[] = [];
  try {
    for (const mode of ["save", "push"] as const) {
      const samples = await latency(cp, mode);
      const p50 = percentile(samples, 50);
      const p95 = percentile(samples, 95);
      const what = mode === "save" ? "file save" : "git push + webhook";
      lines.push(
        `${what} -> PATCH at the control plane, ${samples.length} edits: p50 ${p50.toFixed(0)} ms, p95 ${p95.toFixed(0)} ms (target p95 < 1000 ms) ${p95 < 1000 ? "OK" : "MISSED"}`,
      );
    }
  } finally {
    await cp.stop();
  }
  lines.push(...(await rss(10_000, 75_000)));
  return lines;
}

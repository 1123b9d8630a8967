import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { pino } from "pino";
import { type Controller, startController } from "../src/controller/controller.js";
import { signBody } from "../src/controller/source/webhook.js";
import { DEFAULT_API_KEY } from "../src/control-plane/options.js";
import { startControlPlane, type RunningControlPlane } from "../src/control-plane/server.js";
import { baselineRatio } from "./baseline.js";
import { controllerManifest as manifest } from "./controller-fixtures.js";

// Controller speed: latency from a file save (and from git push + webhook) to the PATCH reaching the
// control plane, p50/p95 over 50 edits. Targets: a save p95 < 100 ms (one save rescans at once:
// file-debounce.ts), a push p95 < 1 s (Argo CD polls every 120-180 s, Flux every 1-10 min).
// Memory is in controller-memory.bench.ts.

const EDITS = 50;
const exec = promisify(execFile);

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
        // Each push its own body, as a forge sends: the controller refuses a delivery it has seen.
        const body = JSON.stringify({ ref: "refs/heads/main", after: String(i) });
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

export async function run(): Promise<string[]> {
  const cp = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
  const lines: string[] = [];
  try {
    for (const mode of ["save", "push"] as const) {
      const samples = await latency(cp, mode);
      const p50 = percentile(samples, 50);
      const p95 = percentile(samples, 95);
      const what = mode === "save" ? "file save" : "git push + webhook";
      const target = mode === "save" ? 100 : 1000;
      lines.push(
        `${what} -> PATCH at the control plane, ${samples.length} edits: p50 ${p50.toFixed(0)} ms, p95 ${p95.toFixed(0)} ms ${await baselineRatio(p95)} (target p95 < ${target} ms) ${p95 < target ? "OK" : "MISSED"}`,
      );
    }
  } finally {
    await cp.stop();
  }
  return lines;
}

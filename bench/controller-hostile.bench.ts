import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { startController } from "../src/controller/controller.js";
import { DEFAULT_API_KEY } from "../src/control-plane/options.js";
import { startControlPlane } from "../src/control-plane/server.js";

// Issue 10: a hostile file dropped into a watched directory made the controller miss health probes
// (11 of 40 timed out at 2 s). The controller now parses on a worker thread. This probes /healthz
// every 20 ms while the controller scans 50,000 keys, against the same probes while idle (the
// baseline, measured in the same run). Target: every probe answers within 100 ms.

const TARGET_MS = 100;
const OK = `apiVersion: plumb/v1
kind: Deployment
metadata: {name: calm}
spec:
  source: external_container
  source_config: {listener_id: 10000000-0000-4000-8000-000000000001}
  source_revision_config: {image_uri: "img:1"}
`;

async function probe(url: string, until: () => boolean): Promise<number[]> {
  const samples: number[] = [];
  while (!until()) {
    const started = performance.now();
    await fetch(`${url}/healthz`).then((r) => r.arrayBuffer());
    samples.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return samples;
}

const summary = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  const p95 = sorted[Math.floor(sorted.length * 0.95)] ?? 0;
  return `${samples.length} probes, p95 ${p95.toFixed(1)} ms, max ${(sorted.at(-1) ?? 0).toFixed(1)} ms`;
};

export async function run(): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), "plumb-bench-hostile-ctl-"));
  const cp = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
  await writeFile(join(dir, "calm.yaml"), OK);
  const controller = await startController({
    source: { kind: "dir", dir },
    api: { apiUrl: cp.url, apiKey: DEFAULT_API_KEY, platformUrl: cp.url },
    listen: { host: "127.0.0.1", port: 0 },
    selfHeal: false,
    concurrency: 4,
    debounceMs: 200,
    backoffBaseMs: 5_000,
    backoffMaxMs: 60_000,
    timeoutMs: 60_000,
    pollIntervalMs: 50,
    env: process.env,
    logger: pino({ level: "silent" }),
  });
  try {
    const url = controller.url ?? "";
    while (!controller.ready()) await new Promise((resolve) => setTimeout(resolve, 10));
    const idleUntil = performance.now() + 1500;
    const idle = await probe(url, () => performance.now() > idleUntil);
    const keys = Array.from({ length: 50_000 }, (_, i) => `  k${i}: v\n`).join("");
    await writeFile(
      join(dir, "hostile.yaml"),
      `apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: h}\nspec:\n${keys}`,
    );
    let scanning = true;
    const scan = controller.rescan().finally(() => (scanning = false));
    const busy = await probe(url, () => !scanning);
    await scan;
    const worst = Math.max(...busy);
    return [
      `/healthz while idle (baseline): ${summary(idle)}`,
      `/healthz while scanning 50,000 keys: ${summary(busy)} (target every probe < ${TARGET_MS} ms) ${worst < TARGET_MS ? "ok" : "OVER TARGET"}`,
    ];
  } finally {
    await controller.stop(2_000);
    await cp.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

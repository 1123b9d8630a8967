import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { applyQuietly, writeContainerManifests } from "./apply-fixtures.js";
import { startControlPlane } from "../src/control-plane/server.js";
import { acquireStateLock } from "../src/lock/index.js";

// What the state lock costs `plumb apply`: an apply of 1,000 changed deployments (no rate limit, so
// the apply is as short as it gets and the share is the largest it can be) against the lock's own
// acquire + release, measured in the same run: a local status directory, and a status branch whose
// lease lives in a (file) git remote. Target: under 5% of the apply's time.

const N = 1000;
const exec = promisify(execFile);

const writeAll = (root: string, tag: string) => writeContainerManifests(root, N, "bench-lock", tag);

async function medianMs(times: number, work: () => Promise<void>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    await work();
    samples.push(performance.now() - started);
  }
  return samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
}

export async function run(): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), "plumb-lock-bench-"));
  try {
    const root = join(dir, "repo", "deployments");
    await writeAll(root, "1");
    const unlimited = { "Default (API key)": { count: 1e9, intervalSeconds: 10 } };
    const cp = await startControlPlane({
      rateLimits: unlimited,
      revisionSeconds: 0,
      deploymentReadySeconds: 0,
    });
    if ((await applyQuietly(cp.url, root)) !== 0) return ["seeding apply failed"];
    await writeAll(root, "2");
    const started = performance.now();
    const exit = await applyQuietly(cp.url, root);
    const applyMs = performance.now() - started;
    await cp.stop();

    const statusDir = join(root, ".plumb", "status");
    const localMs = await medianMs(5, async () => {
      const lock = await acquireStateLock({ statusDir }, { command: "bench" });
      await lock.release();
    });
    // A status branch: the manifests in a clone of a bare remote that holds the lease.
    const origin = join(dir, "origin.git");
    await exec("git", ["init", "--bare", "-q", origin]);
    await exec("git", ["-C", join(dir, "repo"), "init", "-q"]);
    await exec("git", ["-C", join(dir, "repo"), "remote", "add", "origin", origin]);
    const branchMs = await medianMs(5, async () => {
      const lock = await acquireStateLock(
        { statusDir, root, statusBranch: "plumb-status" },
        { command: "bench" },
      );
      await lock.release();
    });
    const pct = (ms: number) => ((ms / applyMs) * 100).toFixed(2);
    return [
      `baseline, same run: apply of ${N} changes ${(applyMs / 1000).toFixed(2)} s (exit ${exit}, no rate limit)`,
      `lock, local status directory: ${localMs.toFixed(1)} ms = ${pct(localMs)}% of the apply (target < 5%)`,
      `lock + status-branch lease (file remote): ${branchMs.toFixed(1)} ms = ${pct(branchMs)}% (target < 5%)`,
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

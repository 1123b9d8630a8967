import { spawnSync } from "node:child_process";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { startReplicas } from "../../../src/controller/environments/replicas.js";
import { memoryLogger, waitFor } from "../support.js";

// Live replicas, counted by heartbeat files on a real directory: another replica counts while its
// file keeps changing, stops counting a lease after its last change (on this replica's clock), and
// at once when it is a process of this host that is gone.

let dir: string;
beforeEach(async () => void (dir = await mkdtemp(join(tmpdir(), "plumb-replicas-"))));
afterEach(async () => rm(dir, { recursive: true, force: true }));

const beat = (file: string, pid: number, n: number) =>
  writeFile(join(dir, file), JSON.stringify({ id: file, host: hostname(), pid, beat: n }));

it("counts a replica while its heartbeat changes, and not a lease after it stopped", async () => {
  const replicas = await startReplicas({ dir, id: "self", leaseMs: 600, log: memoryLogger().logger });
  try {
    expect(replicas.live()).toBe(1);
    await beat("other.json", process.pid, 1);
    await waitFor("other counted", () => replicas.live() === 2);
    // It stops beating: one lease later it no longer counts.
    await waitFor("other gone", () => replicas.live() === 1, 5_000);
    await beat("other.json", process.pid, 2);
    await waitFor("other back", () => replicas.live() === 2);
  } finally {
    await replicas.stop();
  }
});

it("does not count a replica of this host whose process is gone, and removes its own file on stop", async () => {
  const gone = spawnSync(process.execPath, ["-e", "0"]).pid; // exited already
  await beat("dead.json", gone, 1);
  const replicas = await startReplicas({ dir, id: "self", leaseMs: 60_000, log: memoryLogger().logger });
  expect(replicas.live()).toBe(1);
  await replicas.stop();
  expect(await readdir(dir)).toEqual(["dead.json"]);
});

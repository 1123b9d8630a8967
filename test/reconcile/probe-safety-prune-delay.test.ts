import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { createPruneSweep } from "../../src/controller/sweeps/prune-sweep.js";
import type { ObjectStatus } from "../../src/status/status-types.js";
import { loaded, snapshotOf, status } from "../controller/fixtures.js";
import { memoryLogger } from "../controller/support.js";

// controller --prune deletes a removal only once seen in two scans --prune-delay apart. The delay
// was measured on the wall clock: a step forward between two scans (NTP correcting a clock that
// ran behind, a VM resumed) confirmed at the next scan, a second later, a removal seen once (a
// checkout caught half-way through a rename). A duration in one process is measured on a
// monotonic clock.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-prune-delay-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

it("a wall clock stepped forward between two scans does not shorten --prune-delay", async () => {
  const calls: string[] = [];
  const time = { wall: Date.parse("2026-11-27T12:00:00Z"), mono: 1_000 };
  const statuses = new Map<string, ObjectStatus>(
    ["kept", "gone"].map((name) => [`Deployment/${name}`, status(name, { manifest_file: `${name}.yaml` })]),
  );
  const run = createPruneSweep({
    enabled: true,
    delayMs: 30_000,
    root: dir,
    statusDir: join(dir, ".plumb", "status"),
    statuses,
    forget: async (_kind, name) => void calls.push(`forget ${name}`),
    port: {
      getDeployment: async (id) =>
        calls.includes(`DELETE ${id}`) ? null : ({ id, name: id.slice(3) } as never),
      deleteDeployment: async (id) => (calls.push(`DELETE ${id}`), true),
    },
    clock: { now: () => time.wall, sleep: async () => undefined },
    monotonic: () => time.mono,
    timeoutMs: 1_000,
    log: memoryLogger().logger,
    rescanAfter: () => undefined,
  });
  const snapshot = snapshotOf([loaded("kept.yaml", "kept")]);
  await run(snapshot); // first seen
  time.wall += 3_600_000; // the wall clock stepped an hour ahead; one second passed
  time.mono += 1_000;
  await run(snapshot);
  expect(calls).toEqual([]);
  time.mono += 30_000; // the delay has passed
  await run(snapshot);
  expect(calls).toEqual(["DELETE id-gone", "forget gone"]);
});

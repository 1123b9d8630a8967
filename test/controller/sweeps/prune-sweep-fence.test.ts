import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { createPruneSweep, type PruneSweepDeps } from "../../../src/controller/sweeps/prune-sweep.js";
import { PlumbError } from "../../../src/errors.js";
import { readPruneLedger } from "../../../src/status/prune-ledger.js";
import type { ObjectStatus } from "../../../src/status/status-types.js";
import { loaded, snapshotOf, status } from "../fixtures.js";
import { memoryLogger } from "../support.js";

// controller --prune counts each deletion in the prune ledger before its DELETE is sent (a kill in
// between must not leave it out of --prune-max). A leader that lost its state lock must count
// nothing: the ledger is the new leader's store's. The sweep is given the lock's fence.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-prune-fence-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** A sweep over records of `kept` (still in git) and `gone` (removed), live as recorded. */
function sweep(fence: (() => void) | undefined, calls: string[]) {
  const statuses = new Map<string, ObjectStatus>(
    ["kept", "gone"].map((name) => [`Deployment/${name}`, status(name, { manifest_file: `${name}.yaml` })]),
  );
  const deps: PruneSweepDeps = {
    enabled: true,
    delayMs: 0,
    root: dir,
    statusDir: join(dir, ".plumb", "status"),
    statuses,
    forget: async (_kind, name) => void calls.push(`forget ${name}`),
    fence,
    port: {
      getDeployment: async (id) =>
        calls.includes(`DELETE ${id}`) ? null : ({ id, name: id.slice(3) } as never),
      deleteDeployment: async (id) => (calls.push(`DELETE ${id}`), true),
    },
    clock: { now: () => Date.parse("2026-11-27T12:00:00Z"), sleep: async () => undefined },
    timeoutMs: 1_000,
    log: memoryLogger().logger,
    rescanAfter: () => undefined,
  };
  return { run: createPruneSweep(deps), statusDir: deps.statusDir };
}

const snapshot = () => snapshotOf([loaded("kept.yaml", "kept")]);

it("a leader holding its lock counts the deletion, then deletes", async () => {
  const calls: string[] = [];
  const { run, statusDir } = sweep(() => undefined, calls);
  await run(snapshot());
  expect(calls).toEqual(["DELETE id-gone", "forget gone"]);
  expect((await readPruneLedger(statusDir)).map((e) => e.name)).toEqual(["gone"]);
});

it("a leader that lost its lock neither counts nor sends the deletion", async () => {
  const calls: string[] = [];
  const lost = () => {
    throw new PlumbError("lock-lost", "lost the state lock");
  };
  const { run, statusDir } = sweep(lost, calls);
  await run(snapshot());
  expect(calls).toEqual([]);
  expect(await readPruneLedger(statusDir)).toEqual([]);
});

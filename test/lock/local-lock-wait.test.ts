import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Clock } from "../../src/clock.js";
import { newHolder } from "../../src/lock/holder.js";
import { acquireStateLock, readStateLock } from "../../src/lock/index.js";
import { removeLegacyMarker } from "../../src/lock/local/legacy-lock.js";
import { createLockDir } from "../../src/lock/local/lock-dir.js";
import { lockPathOf } from "../../src/lock/local/local-lock.js";
import { fakeClock } from "../support/fake-clock.js";

// A waiter's side of the local lock: how long it waits and how often it looks (a wall clock of the
// test's own), what it reads in holder records (odd leases, processes), and an older plumb's lock.

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-lock-wait-"));
});
afterEach(() => rm(root, { recursive: true, force: true }));

const target = () => ({ statusDir: join(root, ".plumb", "status") });
const lockPath = () => lockPathOf(target());

/** A wall clock that moves only by the waiter's sleeps, which it records. */
function sleepsRecorded() {
  const clock = fakeClock();
  return { clock, sleeps: clock.sleeps };
}

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""]);
  return new Promise<number>((resolve) => child.once("exit", () => resolve(child.pid!)));
}

describe("waiting for a held lock", () => {
  it("without --lock-timeout it is refused at once, without a single sleep", async () => {
    const lock = await acquireStateLock(target(), { command: "plumb controller" });
    const clock: Clock = {
      now: () => 1_700_000_000_000,
      sleep: () => Promise.reject(new Error("slept")),
    };
    await expect(acquireStateLock(target(), { command: "plumb apply", clock })).rejects.toMatchObject({
      code: "state-locked",
    });
    await lock.release();
  });

  it("looks again every retryMs (default 1 s), the last wait only what is left of --lock-timeout", async () => {
    const lock = await acquireStateLock(target(), { command: "plumb controller" });
    const given = sleepsRecorded();
    await expect(
      acquireStateLock(target(), {
        command: "plumb apply",
        timeoutMs: 2_000,
        retryMs: 700,
        clock: given.clock,
      }),
    ).rejects.toMatchObject({ code: "state-locked" });
    expect(given.sleeps).toEqual([700, 700, 600]);
    const byDefault = sleepsRecorded();
    await expect(
      acquireStateLock(target(), { command: "plumb apply", timeoutMs: 1_500, clock: byDefault.clock }),
    ).rejects.toMatchObject({ code: "state-locked" });
    expect(byDefault.sleeps).toEqual([1_000, 500]);
    await lock.release();
  });

  it("a waiter whose signal was aborted stops with its reason, whatever is left of its timeout", async () => {
    const lock = await acquireStateLock(target(), { command: "plumb controller" });
    const stop = new AbortController();
    stop.abort(new Error("stopping"));
    await expect(
      acquireStateLock(target(), { command: "plumb controller", signal: stop.signal }),
    ).rejects.toThrow("stopping");
    await lock.release();
  });
});

describe("holder records", () => {
  for (const lease of [0, -1, "1"])
    it(`a holder record's lease of ${JSON.stringify(lease)} is no lease: the waiter's own applies`, async () => {
      const holder = { ...newHolder("plumb apply", Date.now()), host: "build-7" };
      await createLockDir(lockPath(), holder, 30_000);
      await writeFile(join(lockPath(), "holder.json"), JSON.stringify({ ...holder, lease_ms: lease }));
      await expect(
        acquireStateLock(target(), { command: "plumb apply", timeoutMs: 300, retryMs: 20 }),
      ).rejects.toMatchObject({ code: "state-locked" });
      expect(await readStateLock(target())).toMatchObject({ id: holder.id });
    });

  it("only a process that does not exist is gone: one that cannot be signalled (no pid at all) keeps its lock", async () => {
    const holder = { ...newHolder("plumb apply", Date.now()), pid: 1.5 };
    await createLockDir(lockPath(), holder, 30_000);
    await expect(acquireStateLock(target(), { command: "plumb controller" })).rejects.toMatchObject({
      code: "state-locked",
    });
    expect(await readStateLock(target())).toMatchObject({ id: holder.id });
  });
});

describe("an older plumb's lock", () => {
  async function olderLock(record?: object) {
    await mkdir(lockPath(), { recursive: true });
    if (record) await writeFile(`${lockPath()}.json`, JSON.stringify(record));
  }

  it("whose holder is a process of this host that is gone is taken at once, however fresh", async () => {
    await olderLock({ host: hostname(), pid: await deadPid(), command: "plumb apply" });
    const lock = await acquireStateLock(target(), { command: "plumb controller" });
    expect(await readStateLock(target())).toMatchObject({ id: lock.holder.id });
    await lock.release();
  });

  it("is fresh until older than its stale period (proper-lockfile's rule), and named without a record", async () => {
    const { clock } = sleepsRecorded();
    await olderLock();
    const staleAt = (clock.now() - 30_000) / 1_000; // exactly the stale period: whole seconds
    await utimes(lockPath(), staleAt, staleAt);
    const error = await acquireStateLock(target(), { command: "plumb apply", clock }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "state-locked" });
    expect((error as Error).message).toContain("(proper-lockfile's format, renewed 30s ago); wait for it");
  });

  it("releasing finds no record beside the lock (removed by hand): nothing to remove, no error", async () => {
    await expect(removeLegacyMarker(lockPath(), "a-holder")).resolves.toBeUndefined();
  });

  it("its record without an id reads as a holder without one", async () => {
    await olderLock({ host: "build-7", pid: 4242 });
    expect(await readStateLock(target())).toEqual({
      id: "",
      host: "build-7",
      pid: 4242,
      command: "plumb",
      since: "",
    });
  });
});

import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { leaseRef } from "../../src/lock/branch/remote.js";
import { acquireStateLock, forceUnlock, readStateLock, type StateLock } from "../../src/lock/index.js";
import { lockPathOf } from "../../src/lock/local/local-lock.js";
import { readLockDir } from "../../src/lock/local/lock-dir.js";
import { originWithClones } from "../support/git-clones.js";
import { patientTime } from "../support/patient-time.js";

// [safety] plumb unlock --force while the holder still runs (taken for dead: on another machine, or
// a controller that only looked stuck). The lock is ended, not removed: the holder's next renewal
// fails and it stops, and no one else takes the store before it went a whole lease unrenewed, so
// the two never send at once (counted on the control plane: force-unlock-live.e2e.test.ts).

const exec = promisify(execFile);
let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-force-"));
});
afterEach(() => rm(root, { recursive: true, force: true }));

/** Resolves once the holder learnt it lost its lock (its next renewal), within 30 s of real time. */
const lostOf = (lock: StateLock) =>
  new Promise<unknown>((resolve, reject) => {
    if (lock.lost.aborted) resolve(lock.lost.reason);
    lock.lost.addEventListener("abort", () => resolve(lock.lost.reason), { once: true });
    setTimeout(() => reject(new Error("the holder never learnt it lost its lock")), 30_000).unref();
  });

describe("plumb unlock --force of a local lock whose holder runs", () => {
  const target = () => ({ statusDir: join(root, ".plumb", "status") });

  it("ends it: the holder loses it at its next renewal, the next writer waits out the holder's lease", async () => {
    const held = await acquireStateLock(target(), {
      command: "plumb controller",
      leaseMs: 30_000,
      renewMs: 20,
    });
    expect(await forceUnlock(target())).toMatchObject({ id: held.holder.id });
    expect(await lostOf(held)).toMatchObject({ code: "lock-lost" });
    expect(() => held.assertHeld()).toThrow(expect.objectContaining({ code: "lock-lost" }));

    await expect(acquireStateLock(target(), { command: "plumb apply" })).rejects.toMatchObject({
      code: "state-locked",
      message: expect.stringMatching(
        /was forced free \(plumb unlock --force\) from plumb controller \(pid \d+ on .*\) since .*, which may still be running until its lease ends: it is free once it has gone 30 s unrenewed; wait, or pass --lock-timeout 40s$/,
      ),
    });
    expect((await readLockDir(lockPathOf(target())))?.forced).toBe(true);
    expect(await readStateLock(target())).toMatchObject({ id: held.holder.id, forced: true });
    // A second --force leaves it to run out.
    expect(await forceUnlock(target())).toMatchObject({ id: held.holder.id });
    await held.release(); // its beat is gone: leaves the ended lock

    const time = patientTime();
    const next = await acquireStateLock(target(), { command: "plumb apply", timeoutMs: 600_000, ...time });
    expect(time.waited()).toBeGreaterThanOrEqual(30_000);
    expect(await readStateLock(target())).toMatchObject({ id: next.holder.id });
    await next.release();
  }, 60_000);
});

describe("plumb unlock --force of a status branch lease whose holder runs", () => {
  let clones: string[];
  beforeEach(async () => {
    clones = await originWithClones(root);
  });
  const target = (clone: string) => ({
    statusDir: join(clone, ".plumb", "status"),
    root: clone,
    statusBranch: "plumb-status",
  });
  const leaseSha = async () =>
    (await exec("git", ["-C", clones[0]!, "ls-remote", "origin", leaseRef("plumb-status")])).stdout.split(
      /\s+/,
    )[0];

  it("ends it: the holder loses it at its next renewal, a writer elsewhere waits out the holder's lease", async () => {
    const held = await acquireStateLock(target(clones[0]!), {
      command: "plumb controller",
      leaseMs: 30_000,
      renewMs: 5_000, // (each try to end it must land between two renewals: one look and one push)
    });
    expect(await forceUnlock(target(clones[1]!))).toMatchObject({ id: held.holder.id });
    const ended = await leaseSha();
    expect(ended).toMatch(/^[0-9a-f]{40}$/);
    expect(await lostOf(held)).toMatchObject({ code: "lock-lost" });

    await expect(acquireStateLock(target(clones[1]!), { command: "plumb apply" })).rejects.toMatchObject({
      code: "state-locked",
      message: expect.stringContaining(
        "status branch plumb-status was forced free (plumb unlock --force) from plumb controller (pid ",
      ),
    });
    expect(await readStateLock(target(clones[1]!))).toMatchObject({ id: held.holder.id, forced: true });
    // A second --force leaves it to run out; the holder's release does not remove it either.
    expect(await forceUnlock(target(clones[1]!))).toMatchObject({ id: held.holder.id });
    await held.release();
    expect(await leaseSha()).toBe(ended);

    const time = patientTime();
    const next = await acquireStateLock(target(clones[1]!), {
      command: "plumb apply",
      timeoutMs: 600_000,
      retryMs: 5_000,
      ...time,
    });
    expect(time.waited()).toBeGreaterThanOrEqual(30_000);
    expect(await readStateLock(target(clones[0]!))).toMatchObject({ id: next.holder.id });
    await next.release();
  }, 60_000);
});

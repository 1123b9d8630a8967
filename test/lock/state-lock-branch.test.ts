import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Clock } from "../../src/clock.js";
import { leaseRef } from "../../src/lock/branch/remote.js";
import { acquireStateLock, forceUnlock, lockTargetOf, readStateLock } from "../../src/lock/index.js";
import { originWithClones } from "../support/git-clones.js";

// The state lock with a status branch (index.ts): the local lock, then the branch lease in the
// remote, within one --lock-timeout, with the waiter's clock, signal and monotonic clock, and one
// `lost`, assertHeld and push fence for both. Two clones of one bare remote are two machines.

const exec = promisify(execFile);
let root: string;
let clones: string[];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-state-lock-branch-"));
  clones = await originWithClones(root);
});
afterEach(() => rm(root, { recursive: true, force: true }));

const target = (clone: string, environment?: string) => ({
  statusDir: join(clone, ".plumb", "status"),
  root: clone,
  statusBranch: "plumb-status",
  ...(environment ? { environment } : {}),
});
const remoteLeases = async () =>
  (await exec("git", ["-C", clones[0]!, "ls-remote", "origin", "refs/plumb/*"])).stdout;
const leaseSha = async () => (await remoteLeases()).split(/\s+/)[0] ?? "";
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A real-time clock whose sleeps are recorded and may act (release a holder, stop the waiter). */
function recordingClock(onSleep: (count: number) => Promise<void> | void = () => undefined) {
  const sleeps: number[] = [];
  const clock: Clock = {
    now: () => Date.now(),
    sleep: async (ms, signal) => {
      sleeps.push(ms);
      await onSleep(sleeps.length);
      if (signal?.aborted) throw signal.reason;
      if (sleeps.length > 50) throw new Error("kept waiting");
      await tick(Math.min(ms, 50));
    },
  };
  return { clock, sleeps };
}

describe("the lock target", () => {
  it("of a status location: the resolved status directory, the manifest directory, the branch and its environment", () => {
    const env = { GIT_TERMINAL_PROMPT: "0" };
    expect(
      lockTargetOf({ root: clones[0]!, statusBranch: "plumb-status", gitEnv: env, environment: "prod" }),
    ).toEqual({
      statusDir: resolve(clones[0]!, ".plumb", "status"),
      root: resolve(clones[0]!),
      statusBranch: "plumb-status",
      gitEnv: env,
      environment: "prod",
    });
  });

  it("a status branch without a manifest directory to reach it takes the local lock only", async () => {
    const only = { statusDir: join(root, "status"), statusBranch: "plumb-status" };
    const lock = await acquireStateLock(only, { command: "plumb apply" });
    expect(await readStateLock(only)).toMatchObject({ id: lock.holder.id });
    await lock.release();
    expect(await forceUnlock(only)).toBeNull();
  });
});

describe("the branch lease of the state lock", () => {
  it("an environment's store has a lease of its own (BRANCH@ENV): prod and staging do not exclude each other", async () => {
    const prod = await acquireStateLock(target(clones[0]!, "prod"), { command: "plumb apply" });
    expect(await remoteLeases()).toContain(leaseRef("plumb-status@prod"));
    const staging = await acquireStateLock(target(clones[1]!, "staging"), { command: "plumb apply" });
    expect(await remoteLeases()).toContain(leaseRef("plumb-status@staging"));
    await staging.release();
    await prod.release();
  }, 30_000);

  it("is one for every store on the branch: a tree's and its sub-directory's writers in two clones exclude each other, the refusal naming the store held", async () => {
    // Both reconcile what is under sub/; in separate clones they share no local lock, only this.
    const at = (clone: string, dir: string, environment?: string) => ({
      ...target(clone, environment),
      statusDir: join(clone, dir, ".plumb", "status", environment ?? ""),
      root: join(clone, dir),
    });
    for (const clone of clones) await mkdir(join(clone, "deploy", "sub"), { recursive: true });
    const cases: Array<[string, string, string | undefined, string]> = [
      ["deploy", "deploy/sub", undefined, "deploy/.plumb/status"],
      ["deploy/sub", "deploy", undefined, "deploy/sub/.plumb/status"],
      ["deploy", "deploy/sub", "prod", "deploy/.plumb/status/prod"],
    ];
    for (const [held, other, environment, store] of cases) {
      const first = await acquireStateLock(at(clones[0]!, held, environment), {
        command: "plumb controller",
      });
      const refused = acquireStateLock(at(clones[1]!, other, environment), { command: "plumb apply" });
      await expect(refused).rejects.toMatchObject({ code: "state-locked" });
      await expect(refused).rejects.toThrow(`, writing its store ${store} (one lease for every store`);
      await first.release();
      const next = await acquireStateLock(at(clones[1]!, other, environment), { command: "plumb apply" });
      await next.release();
    }
  }, 60_000);

  it("is renewed every third of its lease by default", async () => {
    const lock = await acquireStateLock(target(clones[0]!), { command: "plumb controller", leaseMs: 6_000 });
    const first = await leaseSha();
    for (let i = 0; i < 100 && (await leaseSha()) === first; i++) await tick(100);
    expect(await leaseSha()).not.toBe(first); // renewed after 2 s; its renew deadline is 4 s
    expect(lock.lost.aborted).toBe(false);
    await lock.release();
  }, 30_000);

  it("is waited for within --lock-timeout, looking again every retryMs on the waiter's clock", async () => {
    const a = await acquireStateLock(target(clones[0]!), { command: "plumb apply" });
    const { clock, sleeps } = recordingClock(async (count) => {
      if (count === 1) await a.release();
    });
    const b = await acquireStateLock(target(clones[1]!), {
      command: "plumb apply",
      timeoutMs: 30_000,
      retryMs: 100,
      clock,
    });
    expect(sleeps).toEqual([100]);
    expect(await readStateLock(target(clones[0]!))).toMatchObject({ id: b.holder.id });
    await b.release();
  }, 30_000);

  it("a waiter for the lease stops when its signal aborts", async () => {
    const a = await acquireStateLock(target(clones[0]!), { command: "plumb apply" });
    const stop = new AbortController();
    const { clock } = recordingClock((count) => {
      if (count === 2) stop.abort(new Error("stopping"));
    });
    await expect(
      acquireStateLock(target(clones[1]!), {
        command: "plumb controller",
        timeoutMs: Infinity,
        retryMs: 10,
        clock,
        signal: stop.signal,
      }),
    ).rejects.toThrow("stopping");
    await a.release();
  }, 30_000);

  it("its lapse on the holder's monotonic clock refuses writes and aborts the lock's lost signal", async () => {
    let now = 1_000;
    const lock = await acquireStateLock(target(clones[0]!), {
      command: "plumb controller",
      leaseMs: 3_000,
      monotonic: () => now,
    });
    now += 4_000; // paused past the whole lease: no renewal on the spot can save the lease
    expect(() => lock.assertHeld()).toThrow(
      expect.objectContaining({
        code: "lock-lost",
        message: expect.stringContaining("lost the lease of status branch plumb-status"),
      }),
    );
    expect(lock.lost.aborted).toBe(true);
    await lock.release();
  }, 30_000);

  it("its push fence swaps the lease in the status push", async () => {
    const lock = await acquireStateLock(target(clones[0]!), { command: "plumb apply" });
    const swaps: string[] = [];
    await lock.pushFence.withLease!(async (swap) => {
      swaps.push(swap.ref);
      return swap.expected; // as if pushed: the lease stays where it was
    });
    expect(swaps).toEqual([leaseRef("plumb-status")]);
    lock.pushFence.check();
    await lock.release();
  }, 30_000);
});

import { pbkdf2 } from "node:crypto";
import { mkdtemp, readdir, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { acquireStateLock, forceUnlock, type StateLock } from "../../src/lock/index.js";
import { lockPathOf } from "../../src/lock/local/local-lock.js";

// The holder's side of the local lock: what its writes are told (assertHeld, the push fence) once
// the lock is gone or its renewals fail, and how a renewal on the spot and the timer's renewals meet.
// The holder's monotonic clock is injected and moves only when a test says so.

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-lock-holder-"));
});
afterEach(() => rm(root, { recursive: true, force: true }));

const target = () => ({ statusDir: join(root, ".plumb", "status") });
const lockPath = () => lockPathOf(target());
const beat = async () => (await readdir(lockPath())).find((n) => n.startsWith("beat-"));
const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A monotonic clock that moves only when told, counting its reads (each renewal reads it once). */
function manualClock() {
  const t = { now: 1_000, reads: 0 };
  return { t, monotonic: () => (t.reads++, t.now) };
}

/**
 * Waits until `done()` holds, for at most 30 s of real time: the renewals it waits for are
 * fs.rename calls on libuv's thread pool, which a loaded CI machine's shared worker can hold up for
 * seconds (Node 20's run of 00:57 on 2026-11-27 saw fewer than three failed renewals in 10 s,
 * the bound this had; alone the wait takes a few tens of ms).
 */
async function until(done: () => boolean | Promise<boolean>, what: string) {
  const deadline = performance.now() + 30_000;
  while (performance.now() < deadline) {
    if (await done()) return;
    await tick(20);
  }
  throw new Error(`timed out waiting until ${what}`);
}

describe("a holder's writes", () => {
  it("once its lock was removed, every write is refused as lost, even within its lease", async () => {
    const { monotonic } = manualClock(); // never moves: the lease itself stays good
    const lock = await acquireStateLock(target(), {
      command: "plumb controller",
      leaseMs: 1_000,
      renewMs: 10,
      monotonic,
    });
    await forceUnlock(target());
    await until(() => lock.lost.aborted, "the holder learns it lost the lock");
    const lost = { code: "lock-lost", message: expect.stringContaining("another process took it") };
    expect(() => lock.assertHeld()).toThrow(expect.objectContaining(lost));
    expect(() => lock.pushFence.check()).toThrow(expect.objectContaining(lost));
    await lock.release();
  }, 60_000);

  it("paused past its renew deadline while the lock was removed: refused, naming the lock and the deadline", async () => {
    const { t, monotonic } = manualClock();
    const lock = await acquireStateLock(target(), { command: "plumb apply", monotonic });
    t.now += 25_000; // past the 20 s renew deadline of the default 30 s lease; no renewal ran
    await forceUnlock(target());
    expect(() => lock.assertHeld()).toThrow(
      expect.objectContaining({
        code: "lock-lost",
        message: expect.stringContaining(`lost the state lock ${lockPath()}: not renewed within 20000 ms`),
      }),
    );
    expect(lock.lost.aborted).toBe(true);
    await lock.release();
  });

  it("within its lease a write costs no renewal on the spot", async () => {
    const { t, monotonic } = manualClock();
    const lock = await acquireStateLock(target(), { command: "plumb apply", monotonic });
    const before = await beat();
    t.now += 5_000; // well within the 20 s renew deadline of the default 30 s lease
    lock.assertHeld();
    lock.pushFence.check();
    expect(await beat()).toBe(before);
    await lock.release();
  });
});

describe("renewals", () => {
  it("come every third of the lease, not more often", async () => {
    const lock = await acquireStateLock(target(), { command: "plumb apply" }); // renewed every 10 s
    const first = await beat();
    await tick(300);
    expect(await beat()).toBe(first);
    await lock.release();
  });
});

describe("renewals that fail", () => {
  it("a disk that does not answer is not a takeover: kept until the renew deadline, then lost as lapsed", async () => {
    const { t, monotonic } = manualClock();
    const lock = await acquireStateLock(target(), {
      command: "plumb controller",
      leaseMs: 1_200, // renew deadline 800 ms
      renewMs: 10,
      monotonic,
    });
    // Every renewal now fails with ENOTDIR (a regular file where the lock directory was).
    await rename(lockPath(), `${lockPath()}.away`);
    await writeFile(lockPath(), "");
    const reads = t.reads;
    await until(() => t.reads >= reads + 3, "three renewals failed");
    expect(lock.lost.aborted).toBe(false);
    t.now += 1_000; // past the renew deadline
    await until(() => lock.lost.aborted, "a renewal past the deadline counts the lock lost");
    expect((lock.lost.reason as Error).message).toContain(
      `lost the state lock ${lockPath()}: not renewed within 800 ms`,
    );
    // A holder that lost its lock never renews it again, even once the disk answers.
    await rm(lockPath());
    await rename(`${lockPath()}.away`, lockPath());
    const after = await beat();
    await tick(200); // twenty renewal periods
    expect(await beat()).toBe(after);
    await lock.release();
  }, 60_000);
});

describe("a renewal on the spot and the timer's renewals", () => {
  it("after a timer renewal ended, a renewal on the spot counts from its own start", async () => {
    const { t, monotonic } = manualClock();
    const lock = await acquireStateLock(target(), {
      command: "plumb controller",
      leaseMs: 6_000, // renewed every 2 s, renew deadline 4 s
      monotonic,
    });
    await until(async () => (await beat())?.endsWith("-1") ?? false, "the first timer renewal");
    await tick(50); // its end (the renewal's own bookkeeping) after the rename
    t.now += 5_000; // past the deadline: the event loop was blocked
    expect(() => lock.assertHeld()).not.toThrow();
    expect(await beat()).toMatch(/-2$/);
    await lock.release();
  }, 60_000);

  it("a renewal in flight that finds its beat moved by a renewal on the spot does not count the lock lost", async () => {
    const { t, monotonic } = manualClock();
    const ref: { lock?: StateLock } = {};
    let armed = false;
    const errors: unknown[] = [];
    const lockOptions = {
      command: "plumb controller",
      leaseMs: 1_200,
      renewMs: 10,
      // The timer's renewal reads the clock just before its rename leaves: a write then renews on
      // the spot (microtask) while that rename waits behind a busy thread pool, so the rename on the
      // spot lands first and the one in flight finds its beat gone.
      monotonic: () => {
        if (armed) {
          armed = false;
          for (let i = 0; i < 8; i++) pbkdf2("x", "y", 50_000, 32, "sha256", () => undefined);
          queueMicrotask(() => {
            try {
              ref.lock!.assertHeld();
            } catch (error) {
              errors.push(error);
            }
          });
        }
        return monotonic();
      },
    };
    const lock = (ref.lock = await acquireStateLock(target(), lockOptions));
    t.now += 2_000; // past the renew deadline: the next write renews on the spot
    armed = true;
    await until(() => !armed, "a timer renewal began");
    const reads = t.reads;
    await until(() => t.reads > reads, "the next timer renewal began (the one in flight ended)");
    expect(errors).toEqual([]);
    expect(lock.lost.aborted).toBe(false);
    await lock.release();
  }, 60_000);
});

import { mkdir, mkdtemp, readdir, rm, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Clock } from "../../src/clock.js";
import { createFence } from "../../src/lock/fence.js";
import { newHolder } from "../../src/lock/holder.js";
import { acquireStateLock, forceUnlock, readStateLock } from "../../src/lock/index.js";
import { createLockDir } from "../../src/lock/local/lock-dir.js";
import { lockPathOf } from "../../src/lock/local/local-lock.js";
import { createObserver } from "../../src/lock/observer.js";
import { patientTime } from "../support/patient-time.js";

// No clock is compared between processes: a waiter takes a lock over only after it has seen the same
// renewal for a whole lease on its own monotonic clock, and a holder stops writing two thirds of a
// lease after its last renewal began. A waiter whose wall clock is an hour off either way neither
// takes a live lock nor waits longer than a lease for a dead one.

const HOUR = 3_600_000;
let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-lease-watch-"));
});
afterEach(() => rm(root, { recursive: true, force: true }));
const target = () => ({ statusDir: join(root, ".plumb", "status") });

/** A wall clock `offsetMs` off, over the real one (as faketime would give the process). */
const skewed = (offsetMs: number): Clock => ({
  now: () => Date.now() + offsetMs,
  sleep: (ms, signal) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener("abort", () => (clearTimeout(timer), reject(signal.reason as Error)));
    }),
});

/** A manual monotonic clock whose sleeps move it forward at once (a waiter's virtual time). */
function virtualTime() {
  let now = 1_000;
  const clock: Clock = {
    now: () => now + HOUR, // its wall clock an hour ahead, too
    sleep: async (ms) => {
      now += ms;
      await new Promise((r) => setImmediate(r));
    },
  };
  return { clock, monotonic: () => now, advance: (ms: number) => (now += ms), at: () => now };
}

describe("watching a lease (observer) and holding one (fence)", () => {
  it("a token is expired only after it was seen unchanged for the whole lease", () => {
    const t = virtualTime();
    const observer = createObserver(t.monotonic);
    expect(observer.expired("beat-1", 1_000)).toBe(false);
    t.advance(999);
    expect(observer.expired("beat-1", 1_000)).toBe(false);
    expect(observer.expired("beat-2", 1_000)).toBe(false); // renewed: watching starts again
    t.advance(999);
    expect(observer.expired("beat-2", 1_000)).toBe(false);
    t.advance(1);
    expect(observer.expired("beat-2", 1_000)).toBe(true);
  });

  it("the holder's lease lapses two thirds of a lease after its last renewal began", () => {
    const t = virtualTime();
    const lapses: string[] = [];
    const fence = createFence({
      leaseMs: 3_000,
      monotonic: t.monotonic,
      since: t.at(),
      what: "the test lock",
      onLapse: (e) => lapses.push(e.code),
    });
    t.advance(1_999);
    expect(fence.valid()).toBe(true);
    fence.renewed(t.at() - 500); // a renewal that began 500 ms ago and just landed
    t.advance(1_499);
    fence.check();
    t.advance(1);
    expect(() => fence.check()).toThrow(expect.objectContaining({ code: "lock-lost" }));
    expect(lapses).toEqual(["lock-lost"]);
  });
});

describe("the local lock under clock skew", () => {
  for (const offset of [HOUR, -HOUR])
    it(`a waiter whose clock is ${offset > 0 ? "+" : "-"}1 h never takes a live holder's lock`, async () => {
      // A 3 s lease watched for 4.5 s: a holder in this (shared, loaded) worker renews every 1 s,
      // so a renewal late by up to 2 s neither lapses it nor lets the waiter take it.
      const holder = await acquireStateLock(target(), { command: "plumb controller", leaseMs: 3_000 });
      await expect(
        acquireStateLock(target(), {
          command: "plumb controller",
          leaseMs: 3_000,
          timeoutMs: 4_500,
          retryMs: 50,
          clock: skewed(offset),
        }),
      ).rejects.toMatchObject({ code: "state-locked" });
      holder.assertHeld();
      expect(holder.lost.aborted).toBe(false);
      await holder.release();
    }, 10_000);

  it("a waiter whose clock is +1 h never takes an older plumb's fresh lock (judged on the disk's time too)", async () => {
    await mkdir(lockPathOf(target()), { recursive: true }); // proper-lockfile's lock, its mtime now
    await expect(
      acquireStateLock(target(), { command: "plumb apply", clock: skewed(HOUR) }),
    ).rejects.toMatchObject({
      code: "state-locked",
      message: expect.stringContaining("locked by an older plumb"),
    });
    expect(await readdir(join(root, ".plumb"))).toEqual(["status.lock"]); // no probe file left
    // Old by both clocks: taken, as proper-lockfile's rule says.
    const old = new Date(Date.now() - 60_000);
    await utimes(lockPathOf(target()), old, old);
    const lock = await acquireStateLock(target(), { command: "plumb apply", clock: skewed(HOUR) });
    await lock.release();
  });

  it("a holder that stopped renewing is taken over after one lease of the waiter's own time", async () => {
    // A live process (this one) that holds the lock and never renews it: as if paused.
    await createLockDir(lockPathOf(target()), newHolder("plumb controller", Date.now()), 5_000);
    const t = virtualTime();
    const started = t.at();
    const lock = await acquireStateLock(target(), {
      command: "plumb apply",
      timeoutMs: 60_000,
      retryMs: 250,
      clock: t.clock,
      monotonic: t.monotonic,
    });
    const waited = t.at() - started;
    expect(waited).toBeGreaterThanOrEqual(5_000); // the holder's lease (lease_ms), not the waiter's
    expect(waited).toBeLessThanOrEqual(5_250);
    expect(await readStateLock(target())).toMatchObject({ command: "plumb apply" });
    await lock.release();
  });

  it("a holder paused past its renew deadline whose lock was taken refuses to write and reports it lost", async () => {
    const t = virtualTime();
    const lock = await acquireStateLock(target(), {
      command: "plumb controller",
      leaseMs: 3_000,
      monotonic: t.monotonic,
    });
    lock.assertHeld();
    t.advance(4_000); // SIGSTOP for 4 s, then SIGCONT: no renewal began meanwhile
    // Meanwhile another process took the lock over (here: forced, then taken once a lease passed).
    await forceUnlock(target());
    const next = await acquireStateLock(target(), {
      command: "plumb apply",
      timeoutMs: 600_000,
      ...patientTime(),
    });
    expect(() => lock.assertHeld()).toThrow(expect.objectContaining({ code: "lock-lost" }));
    expect(lock.lost.aborted).toBe(true);
    await lock.release();
    expect(await readStateLock(target())).toMatchObject({ command: "plumb apply" });
    await next.release();
  });

  it("a holder past its deadline whose lock nobody took renews on the spot (its event loop was blocked)", async () => {
    const t = virtualTime();
    const lock = await acquireStateLock(target(), {
      command: "plumb controller",
      leaseMs: 3_000,
      monotonic: t.monotonic,
    });
    const before = await readdir(lockPathOf(target()));
    t.advance(4_000); // no renewal ran: the timer never got the event loop
    lock.assertHeld(); // the rename of its own beat lands: it still holds the lock
    expect(await readdir(lockPathOf(target()))).not.toEqual(before);
    expect(lock.lost.aborted).toBe(false);
    await lock.release();
  });
});

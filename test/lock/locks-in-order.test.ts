import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { acquireStateLock, forceUnlock, readStateLock, type StateLock } from "../../src/lock/index.js";
import { acquireStateLocks } from "../../src/lock/locks-in-order.js";
import { PlumbError } from "../../src/errors.js";

// A writer's own store and the stores nearby, locked in one order by path (locks-in-order.ts,
// docs/status.md "Stores above and below"): real lock directories in a temp dir, no stand-ins.

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-locks-in-order-"));
});
afterEach(() => rm(root, { recursive: true, force: true }));

// "a" < "b" < "c" by path: the own store is "b", one store nearby sorts before it, one after.
const dir = (name: string) => join(root, name, ".plumb", "status");
const own = () => ({ statusDir: dir("b") });
const held = async (name: string) => (await readStateLock({ statusDir: dir(name) })) !== null;
const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const scanOf =
  (...names: string[]) =>
  () =>
    Promise.resolve(names.map(dir));

/** Waits (bounded) until `done()` holds. */
async function until(done: () => boolean | Promise<boolean>, what: string) {
  for (let i = 0; i < 500; i++) {
    if (await done()) return;
    await tick(20);
  }
  throw new Error(`timed out waiting until ${what}`);
}

/** What `attempt` was refused with (it must be refused). */
const refusal = (attempt: Promise<unknown>) =>
  attempt.then(
    () => {
      throw new Error("not refused");
    },
    (e: unknown) => e as Error & { code?: string },
  );

/** A monotonic clock that never moves: a lease stays good until its lock is removed. */
const still = () => 1_000;

describe("the stores a writer locks, in order by path", () => {
  it("holds its own store and those nearby, and releases them all with one release", async () => {
    const lock = await acquireStateLocks(own(), scanOf("a", "c"), { command: "plumb apply" });
    expect([await held("a"), await held("b"), await held("c")]).toEqual([true, true, true]);
    expect(await readStateLock(own())).toMatchObject({ id: lock.holder.id, command: "plumb apply" });
    await lock.release();
    expect([await held("a"), await held("b"), await held("c")]).toEqual([false, false, false]);
  });

  it("with no store nearby is the own store's lock itself", async () => {
    const lock = await acquireStateLocks(own(), scanOf(), { command: "plumb apply" });
    expect(await held("b")).toBe(true);
    expect(lock.pushFence.withLease).toBeUndefined();
    await lock.release();
    expect(await held("b")).toBe(false);
  });

  it("takes a store whose path sorts first before its own: waiting for it, it holds nothing", async () => {
    const other = await acquireStateLock({ statusDir: dir("a") }, { command: "plumb controller" });
    const waiting = acquireStateLocks(own(), scanOf("a", "c"), {
      command: "plumb apply",
      timeoutMs: 10_000,
      retryMs: 20,
    });
    await tick(200);
    expect([await held("b"), await held("c")]).toEqual([false, false]);
    await other.release();
    const lock = await waiting;
    expect([await held("a"), await held("b"), await held("c")]).toEqual([true, true, true]);
    await lock.release();
  }, 15_000);

  it("takes the stores before its own in order by path, whatever order they were found in", async () => {
    // "a1" and "a2" both sort before "b": found as a2, a1, it takes a1 first, then waits for a2.
    const other = await acquireStateLock({ statusDir: dir("a2") }, { command: "plumb controller" });
    const waiting = acquireStateLocks(own(), scanOf("a2", "a1"), {
      command: "plumb apply",
      timeoutMs: 10_000,
      retryMs: 20,
    });
    await until(() => held("a1"), "the first store by path is held");
    expect(await held("b")).toBe(false);
    await other.release();
    const lock = await waiting;
    expect([await held("a1"), await held("a2"), await held("b")]).toEqual([true, true, true]);
    await lock.release();
  }, 15_000);

  it("takes a store whose path sorts after its own last: waiting for it, it holds the ones before", async () => {
    const other = await acquireStateLock({ statusDir: dir("c") }, { command: "plumb controller" });
    const waiting = acquireStateLocks(own(), scanOf("c", "a"), {
      command: "plumb apply",
      timeoutMs: 10_000,
      retryMs: 20,
    });
    await until(async () => (await held("a")) && (await held("b")), "the stores before are held");
    expect((await readStateLock({ statusDir: dir("c") }))?.command).toBe("plumb controller");
    await other.release();
    const lock = await waiting;
    expect(await held("c")).toBe(true);
    await lock.release();
  }, 15_000);

  it("refused by a store after its own, lets go of those it took", async () => {
    const other = await acquireStateLock({ statusDir: dir("c") }, { command: "plumb controller" });
    await expect(
      acquireStateLocks(own(), scanOf("a", "c"), { command: "plumb apply" }),
    ).rejects.toMatchObject({
      code: "state-locked",
    });
    expect([await held("a"), await held("b")]).toEqual([false, false]);
    expect(await held("c")).toBe(true); // the other writer's, untouched
    await other.release();
  });

  it("refused by the first store, before its own was taken: the refusal itself, nothing held", async () => {
    const other = await acquireStateLock({ statusDir: dir("a") }, { command: "plumb controller" });
    await expect(
      acquireStateLocks(own(), scanOf("a", "c"), { command: "plumb apply" }),
    ).rejects.toMatchObject({
      code: "state-locked",
      message: expect.stringContaining("plumb controller"),
    });
    expect([await held("b"), await held("c")]).toEqual([false, false]);
    await other.release();
  });

  it("refused by its own store, lets go of those before it", async () => {
    const other = await acquireStateLock(own(), { command: "plumb controller" });
    await expect(
      acquireStateLocks(own(), scanOf("a", "c"), { command: "plumb apply" }),
    ).rejects.toMatchObject({
      code: "state-locked",
    });
    expect([await held("a"), await held("c")]).toEqual([false, false]);
    await other.release();
  });

  it("locks each store once: its own store and repeats among those found nearby are not taken again", async () => {
    const scan = () =>
      Promise.resolve([dir("a"), `${dir("a")}/`, dir("b"), join(dir("b"), "..", "status"), dir("a")]);
    const lock = await acquireStateLocks(own(), scan, { command: "plumb apply" });
    expect([await held("a"), await held("b")]).toEqual([true, true]);
    await lock.release();
    expect([await held("a"), await held("b")]).toEqual([false, false]);
  });

  it("a store nearby first found once the others are held: all let go and taken again with it", async () => {
    let scans = 0;
    const scan = () => Promise.resolve(++scans === 1 ? [dir("c")] : [dir("c"), dir("a")]);
    const lock = await acquireStateLocks(own(), scan, { command: "plumb apply" });
    expect(scans).toBe(2);
    expect([await held("a"), await held("b"), await held("c")]).toEqual([true, true, true]);
    await lock.release();
    expect([await held("a"), await held("b"), await held("c")]).toEqual([false, false, false]);
  });

  it("the same stores found again: taken once, not let go and taken again", async () => {
    let scans = 0;
    let seenAtSecondLook: string | undefined;
    const scan = async () => {
      if (++scans === 2) seenAtSecondLook = (await readStateLock({ statusDir: dir("a") }))?.id;
      return [dir("a"), `${dir("a")}/`];
    };
    const lock = await acquireStateLocks(own(), scan, { command: "plumb apply" });
    expect(scans).toBe(2);
    // Still the holder that held it when it looked again: not released and taken by a new one.
    expect(seenAtSecondLook).toBeDefined();
    expect((await readStateLock({ statusDir: dir("a") }))?.id).toBe(seenAtSecondLook);
    await lock.release();
  });

  it("a store found at the second look that is held: refused, and none of the first ones kept", async () => {
    const other = await acquireStateLock({ statusDir: dir("c") }, { command: "plumb controller" });
    let scans = 0;
    const scan = () => Promise.resolve(++scans === 1 ? [dir("a")] : [dir("a"), dir("c")]);
    await expect(acquireStateLocks(own(), scan, { command: "plumb apply" })).rejects.toMatchObject({
      code: "state-locked",
    });
    expect([await held("a"), await held("b")]).toEqual([false, false]);
    await other.release();
  });

  it("a second look that fails: its error, and every lock taken let go", async () => {
    let scans = 0;
    const scan = () =>
      ++scans === 1 ? Promise.resolve([dir("a"), dir("c")]) : Promise.reject(new Error("scan failed"));
    await expect(acquireStateLocks(own(), scan, { command: "plumb apply" })).rejects.toThrow("scan failed");
    expect([await held("a"), await held("b"), await held("c")]).toEqual([false, false, false]);
  });
});

describe("a store nearby whose lock cannot be taken", () => {
  it("is nearby-store-unwritable (exit 64), naming the store, the command and the fix; nothing held", async () => {
    await mkdir(join(root, "c"), { recursive: true });
    await writeFile(join(root, "c", ".plumb"), "a file where the store's directory would be\n");
    const error = await refusal(acquireStateLocks(own(), scanOf("a", "c"), { command: "plumb apply" }));
    expect(error).toMatchObject({
      code: "nearby-store-unwritable",
      exitCode: 64,
      message: expect.stringContaining(`the status store ${dir("c")} is a store nearby`),
    });
    expect(error.message).toContain("it records objects plumb apply sends too");
    expect(error.cause).toMatchObject({ code: "EEXIST" }); // the disk's own failure, kept as the cause
    expect([await held("a"), await held("b")]).toEqual([false, false]);
  });

  it("its own store's lock that cannot be taken is not called a store nearby", async () => {
    await mkdir(join(root, "b"), { recursive: true });
    await writeFile(join(root, "b", ".plumb"), "a file where the store's directory would be\n");
    const error = await refusal(acquireStateLocks(own(), scanOf("a"), { command: "plumb apply" }));
    expect(error.code).toBe("lock-io-error");
    expect(error.message).not.toContain("a store nearby");
    expect(await held("a")).toBe(false);
  });

  it("something else at a store nearby's lock path: that lock-io-error itself, saying what is there", async () => {
    await mkdir(join(root, "c", ".plumb"), { recursive: true });
    await writeFile(`${dir("c")}.lock`, "not a lock\n");
    const error = await refusal(acquireStateLocks(own(), scanOf("a", "c"), { command: "plumb apply" }));
    expect(error).toMatchObject({
      code: "lock-io-error",
      message: expect.stringContaining("is a file, not a state lock"),
    });
    expect([await held("a"), await held("b")]).toEqual([false, false]);
  });

  it("a wait for a store nearby ended by the caller's signal: its reason as it is, never called unwritable", async () => {
    const other = await acquireStateLock({ statusDir: dir("a") }, { command: "plumb controller" });
    const stop = new AbortController();
    const reason = new PlumbError("lock-lost", "stopped", { cause: new Error("the controller stops") });
    const waiting = acquireStateLocks(own(), scanOf("a"), {
      command: "plumb apply",
      timeoutMs: Infinity,
      retryMs: 20,
      signal: stop.signal,
    });
    await tick(100);
    stop.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(await held("b")).toBe(false);
    await other.release();
  }, 15_000);
});

describe("the lock of a store and those nearby, once held", () => {
  const options = { command: "plumb controller", leaseMs: 1_000, renewMs: 10, monotonic: still };
  let lock: StateLock | undefined;
  afterEach(async () => {
    await lock?.release();
    lock = undefined;
  });

  it("is the own store's holder and push fence", async () => {
    lock = await acquireStateLocks(own(), scanOf("a"), options);
    expect(await readStateLock(own())).toMatchObject({ id: lock.holder.id });
    expect(lock.pushFence.withLease).toBeUndefined();
    expect(() => lock!.pushFence.check()).not.toThrow();
    expect(() => lock!.assertHeld()).not.toThrow();
  });

  it("is lost, and refuses writes, once a store nearby was taken from it", async () => {
    lock = await acquireStateLocks(own(), scanOf("a", "c"), options);
    await forceUnlock({ statusDir: dir("c") });
    await until(() => lock!.lost.aborted, "the lock is lost with the store nearby");
    expect(() => lock!.assertHeld()).toThrow(expect.objectContaining({ code: "lock-lost" }));
  }, 15_000);

  it("is lost, and refuses writes, once its own store was taken from it", async () => {
    lock = await acquireStateLocks(own(), scanOf("a", "c"), options);
    await forceUnlock(own());
    await until(() => lock!.lost.aborted, "the lock is lost with its own store");
    expect(() => lock!.assertHeld()).toThrow(expect.objectContaining({ code: "lock-lost" }));
    expect(() => lock!.pushFence.check()).toThrow(expect.objectContaining({ code: "lock-lost" }));
  }, 15_000);
});

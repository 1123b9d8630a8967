import { mkdir, mkdtemp, readdir, readFile, rename, rm, utimes, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newHolder } from "../../src/lock/holder.js";
import { acquireStateLock, forceUnlock, readStateLock } from "../../src/lock/index.js";
import { createLockDir } from "../../src/lock/local/lock-dir.js";
import { lockPathOf } from "../../src/lock/local/local-lock.js";
import { patientTime } from "../support/patient-time.js";

// The local lock's options and the odd things found at its path (state-locked, never ignored).

let root: string;
let statusDir: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-lock-edges-"));
  statusDir = join(root, ".plumb", "status");
});
afterEach(() => rm(root, { recursive: true, force: true }));

const target = () => ({ statusDir });

describe("the local lock's options", () => {
  it("a status directory spelled with trailing slashes is the same store, the same lock", async () => {
    expect(lockPathOf({ statusDir: `${statusDir}//` })).toBe(`${statusDir}.lock`);
    const lock = await acquireStateLock(target(), { command: "plumb apply" });
    await expect(
      acquireStateLock({ statusDir: `${statusDir}/` }, { command: "plumb apply" }),
    ).rejects.toMatchObject({ code: "state-locked" });
    await lock.release();
  });

  it("waits no longer than --lock-timeout even when it would look again later", async () => {
    const lock = await acquireStateLock(target(), { command: "plumb apply" });
    const started = Date.now();
    await expect(
      acquireStateLock(target(), { command: "plumb apply", timeoutMs: 200, retryMs: 60_000 }),
    ).rejects.toMatchObject({ code: "state-locked" });
    expect(Date.now() - started).toBeLessThan(20_000);
    await lock.release();
  });

  it("a lease under a second is a second: the holder does not count its lock lost at once", async () => {
    const lock = await acquireStateLock(target(), { command: "plumb apply", leaseMs: 1 });
    expect(() => lock.assertHeld()).not.toThrow();
    expect(lock.lost.aborted).toBe(false);
    await lock.release();
  });
});

describe("the holder's renewals", () => {
  it("a holder whose lock was removed learns that another process took it", async () => {
    const lock = await acquireStateLock(target(), {
      command: "plumb controller",
      leaseMs: 6_000, // renewed every 50 ms; a loaded worker's lag does not lapse it first
      renewMs: 50,
    });
    await forceUnlock(target());
    // A renewal (every 50 ms) may find the lock gone while forceUnlock is still cleaning up: the
    // abort can come before this line (a loaded run waited here for an event that had fired).
    if (!lock.lost.aborted)
      await new Promise<void>((resolve) =>
        lock.lost.addEventListener("abort", () => resolve(), { once: true }),
      );
    expect((lock.lost.reason as Error).message).toContain("another process took it");
    await lock.release();
  }, 15_000);

  it("after a renewal on the spot the timer's renewals go on from it: the lock is kept", async () => {
    let now = 1_000;
    const lock = await acquireStateLock(target(), {
      command: "plumb controller",
      leaseMs: 1_200,
      monotonic: () => now,
    });
    now += 2_000; // past the deadline: the next write renews on the spot
    lock.assertHeld();
    const beat = async () => (await readdir(lockPathOf(target()))).find((n) => n.startsWith("beat-"));
    const after = await beat();
    for (let i = 0; i < 200 && (await beat()) === after; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await beat()).not.toBe(after);
    expect(lock.lost.aborted).toBe(false);
    await lock.release();
  }, 15_000);
});

describe("what is found at the lock path", () => {
  it("a holder record for an older plumb that cannot be written gives the lock back: lock-io-error", async () => {
    await mkdir(`${lockPathOf(target())}.json`, { recursive: true }); // a directory where the record goes
    await expect(acquireStateLock(target(), { command: "plumb apply" })).rejects.toMatchObject({
      code: "lock-io-error",
    });
    expect(await readStateLock(target())).toBeNull();
  });

  it("a release cut short after its beat was renamed (a crash) reads as unlocked and is taken at once", async () => {
    const holder = { ...newHolder("plumb apply", Date.now()), host: "build-7" };
    await createLockDir(lockPathOf(target()), holder, 30_000);
    const dir = lockPathOf(target());
    await rename(join(dir, `beat-${holder.id}-0`), join(dir, `beat-${holder.id}-released`));
    expect(await readStateLock(target())).toBeNull();
    const lock = await acquireStateLock(target(), { command: "plumb controller" });
    expect(await readStateLock(target())).toMatchObject({ id: lock.holder.id });
    await lock.release();
  });

  it("a holder renews at least every third of its lease, whatever renewMs says: a waiter never sees it expire", async () => {
    const lock = await acquireStateLock(target(), {
      command: "plumb controller",
      leaseMs: 3_000,
      renewMs: 60_000,
    });
    await expect(
      acquireStateLock(target(), { command: "plumb apply", timeoutMs: 5_000, retryMs: 50 }),
    ).rejects.toMatchObject({ code: "state-locked" });
    expect(lock.lost.aborted).toBe(false);
    await lock.release();
  }, 20_000);

  it("a regular file there is no one's lock: refused as lock-io-error saying so (not held by pid 0 on unknown), removed by --force", async () => {
    await mkdir(join(root, ".plumb"), { recursive: true });
    await writeFile(lockPathOf(target()), "");
    const notALock = {
      code: "lock-io-error",
      message: expect.stringContaining(`${lockPathOf(target())} is a file, not a state lock`),
    };
    await expect(acquireStateLock(target(), { command: "plumb apply" })).rejects.toMatchObject(notALock);
    await expect(readStateLock(target())).rejects.toMatchObject(notALock);
    expect(await forceUnlock(target())).toBeNull();
    const lock = await acquireStateLock(target(), { command: "plumb apply" });
    await lock.release();
  });

  it("a directory where the lock's holder record for an older plumb goes: lock-io-error naming that path, no lock left", async () => {
    const marker = `${lockPathOf(target())}.json`;
    await mkdir(join(marker, "x"), { recursive: true });
    await expect(acquireStateLock(target(), { command: "plumb apply" })).rejects.toMatchObject({
      code: "lock-io-error",
      message: expect.stringMatching(
        new RegExp(`^${marker}: is a directory, not a file \\(EISDIR\\); plumb writes this holder record`),
      ),
    });
    expect(await readStateLock(target())).toBeNull();
  });

  it("an older plumb's holder record without command or time still names its process", async () => {
    await mkdir(lockPathOf(target()), { recursive: true });
    await writeFile(`${lockPathOf(target())}.json`, JSON.stringify({ host: hostname(), pid: 1 }));
    const ago = new Date(Date.now() - 10_000);
    await utimes(lockPathOf(target()), ago, ago);
    const error = await acquireStateLock(target(), { command: "plumb apply" }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(
      new RegExp(`renewed 1[01]s ago, held by plumb \\(pid 1 on ${hostname()}\\) since an unknown time\\)`),
    );
  });

  for (const record of [{ host: hostname(), pid: "1" }, { pid: 1 }])
    it(`an older plumb's record that names no process (${JSON.stringify(record)}) names no holder`, async () => {
      await mkdir(lockPathOf(target()), { recursive: true });
      await writeFile(`${lockPathOf(target())}.json`, JSON.stringify(record));
      const error = await acquireStateLock(target(), { command: "plumb apply" }).catch((e: unknown) => e);
      expect((error as Error).message).toContain("locked by an older plumb");
      expect((error as Error).message).not.toContain("held by");
    });

  it("a holder that lost its lock leaves the next holder's record for an older plumb at release", async () => {
    const first = await acquireStateLock(target(), { command: "plumb apply" });
    await forceUnlock(target()); // then taken once a lease passed
    const second = await acquireStateLock(target(), {
      command: "plumb controller",
      timeoutMs: 600_000,
      ...patientTime(),
    });
    await first.release();
    const marker = JSON.parse(await readFile(`${lockPathOf(target())}.json`, "utf8")) as { id: string };
    expect(marker.id).toBe(second.holder.id);
    await second.release();
  });

  it("an older plumb's lock is fresh for the larger of 30 s and this process's lease", async () => {
    await mkdir(lockPathOf(target()), { recursive: true });
    const ago = new Date(Date.now() - 45_000);
    await utimes(lockPathOf(target()), ago, ago);
    await expect(
      acquireStateLock(target(), { command: "plumb apply", leaseMs: 60_000 }),
    ).rejects.toMatchObject({ code: "state-locked" });
    const lock = await acquireStateLock(target(), { command: "plumb apply" });
    expect(await readStateLock(target())).toMatchObject({ id: lock.holder.id });
    await lock.release();
  });
});

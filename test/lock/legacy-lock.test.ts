import { mkdir, mkdtemp, readFile, readdir, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import lockfile from "proper-lockfile";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newHolder } from "../../src/lock/holder.js";
import { acquireStateLock, forceUnlock, readStateLock } from "../../src/lock/index.js";
import { lockPathOf } from "../../src/lock/local/local-lock.js";

// An older plumb (proper-lockfile: the directory <status>.lock made by mkdir, its mtime refreshed,
// and <status>.lock.json naming the holder) and this one on the same store exclude each other, both
// ways. The older plumb is proper-lockfile itself, called with the options that plumb passed.

let root: string;
const releases: Array<() => Promise<void>> = [];
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-legacy-lock-"));
});
afterEach(async () => {
  for (const release of releases.splice(0)) await release().catch(() => undefined);
  await rm(root, { recursive: true, force: true });
});

const target = () => ({ statusDir: join(root, ".plumb", "status") });
const lockPath = () => lockPathOf(target());

/** The older plumb's acquisition (src/lock/local/local-lock.ts before the lease-watching lock). */
async function olderPlumbLock(leaseMs = 30_000) {
  await mkdir(join(root, ".plumb"), { recursive: true });
  const release = await lockfile.lock(target().statusDir, {
    lockfilePath: lockPath(),
    realpath: false,
    stale: leaseMs,
    update: leaseMs / 3,
    retries: 0,
  });
  const holder = newHolder("plumb apply", Date.now());
  await writeFile(`${lockPath()}.json`, `${JSON.stringify({ ...holder, pid: 1 }, null, 2)}\n`);
  releases.push(release);
  return release;
}

describe("an older plumb's lock on the store", () => {
  it("refuses while it is fresh, naming the path and the fix", async () => {
    await olderPlumbLock();
    const error = await acquireStateLock(target(), { command: "plumb apply" }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "state-locked" });
    const message = (error as Error).message;
    expect(message).toContain(`locked by an older plumb: ${lockPath()} is its lock`);
    expect(message).toContain("held by plumb apply (pid 1");
    expect(message).toContain("plumb unlock --force");
    // Its lock is untouched: the older plumb still holds it.
    expect(await lockfile.check(target().statusDir, { lockfilePath: lockPath(), realpath: false })).toBe(
      true,
    );
    expect(await readdir(lockPath())).toEqual([]);
  });

  it("waits for it with --lock-timeout, then takes the store", async () => {
    const release = await olderPlumbLock();
    setTimeout(() => void release(), 300);
    const lock = await acquireStateLock(target(), { command: "plumb apply", timeoutMs: 10_000, retryMs: 50 });
    expect(await readStateLock(target())).toMatchObject({ command: "plumb apply", pid: process.pid });
    await lock.release();
  });

  it("takes one that is stale by proper-lockfile's rule (mtime older than its stale period)", async () => {
    await mkdir(lockPath(), { recursive: true });
    const old = new Date(Date.now() - 60_000);
    await utimes(lockPath(), old, old);
    const lock = await acquireStateLock(target(), { command: "plumb apply" });
    expect(await readStateLock(target())).toMatchObject({ command: "plumb apply", pid: process.pid });
    await lock.release();
  });

  it("plumb unlock --force removes it and its holder record", async () => {
    await olderPlumbLock();
    expect(await forceUnlock(target())).toMatchObject({ command: "plumb apply", pid: 1 });
    await expect(stat(lockPath())).rejects.toMatchObject({ code: "ENOENT" });
    await expect(stat(`${lockPath()}.json`)).rejects.toMatchObject({ code: "ENOENT" });
  });
});

describe("this plumb holding the store, seen by an older plumb", () => {
  it("the lock directory's mtime stays fresh and its holder record names this holder; the older plumb is refused", async () => {
    // A 3 s lease (a renewal every 1 s): late renewals on a loaded machine stay within it.
    const lock = await acquireStateLock(target(), { command: "plumb controller", leaseMs: 3_000 });
    releases.push(() => lock.release());
    const marker = JSON.parse(await readFile(`${lockPath()}.json`, "utf8")) as { id: string; pid: number };
    expect(marker).toMatchObject({ id: lock.holder.id, pid: process.pid });
    // After a renewal (every 1 s here) the mtime is newer than before it.
    const before = (await stat(lockPath())).mtimeMs;
    const beats = async () => (await readdir(lockPath())).find((n) => n.startsWith("beat-"));
    const first = await beats();
    for (let i = 0; i < 500 && (await beats()) === first; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await beats()).not.toBe(first);
    expect((await stat(lockPath())).mtimeMs).toBeGreaterThan(before);
    expect(Date.now() - (await stat(lockPath())).mtimeMs).toBeLessThan(3_000);
    await expect(olderPlumbLock()).rejects.toMatchObject({ code: "ELOCKED" });
    expect(await lockfile.check(target().statusDir, { lockfilePath: lockPath(), realpath: false })).toBe(
      true,
    );
  });

  it("an older plumb that judges it stale cannot remove it (a directory with files): still refused", async () => {
    const lock = await acquireStateLock(target(), { command: "plumb apply", leaseMs: 60_000 });
    releases.push(() => lock.release());
    const old = new Date(Date.now() - 120_000);
    await utimes(lockPath(), old, old);
    await expect(olderPlumbLock(5_000)).rejects.toMatchObject({ code: "ENOTEMPTY" });
    lock.assertHeld();
    expect(await readStateLock(target())).toMatchObject({ id: lock.holder.id });
  });

  it("after release the holder record is gone and an older plumb can lock the store", async () => {
    const lock = await acquireStateLock(target(), { command: "plumb apply" });
    await lock.release();
    await expect(stat(`${lockPath()}.json`)).rejects.toMatchObject({ code: "ENOENT" });
    await olderPlumbLock();
  });
});

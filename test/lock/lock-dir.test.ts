import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newHolder } from "../../src/lock/holder.js";
import { fakeClock } from "../support/fake-clock.js";
import { acquireStateLock, readStateLock } from "../../src/lock/index.js";
import {
  createLockDir,
  readLockDir,
  releaseLockDir,
  renewLockDir,
  renewLockDirSync,
  takeOverLockDir,
} from "../../src/lock/local/lock-dir.js";
import { lockPathOf } from "../../src/lock/local/local-lock.js";
import { endLockDir, removeLockDir } from "../../src/lock/local/local-unlock.js";

// The lock directory's own operations (lock-dir.ts), each an atomic rename: what a waiter reads, a
// holder's renewal and release, a waiter's takeover of the lock it watched expire. A renewal or
// takeover that finds the lock someone else's says so (false) and leaves it; a disk error is thrown.

let root: string;
let lockPath: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-lock-dir-"));
  lockPath = lockPathOf({ statusDir: join(root, ".plumb", "status") });
});
afterEach(() => rm(root, { recursive: true, force: true }));

/** A lock of a holder on another host, taken by createLockDir. */
async function held() {
  const holder = { ...newHolder("plumb apply", Date.now()), host: "build-7" };
  expect(await createLockDir(lockPath, holder, 30_000)).toBe(true);
  return holder;
}

const names = () => readdir(lockPath).then((n) => n.sort());

/** A regular file where the lock directory was: every rename inside it fails with ENOTDIR. */
async function fileInsteadOfLock() {
  await rm(lockPath, { recursive: true, force: true });
  await writeFile(lockPath, "");
}

describe("reading the lock (a waiter's look)", () => {
  it("no lock there is null (released between a failed take and the look)", async () => {
    expect(await readLockDir(lockPath)).toBeNull();
  });

  it("a lock path that cannot be read (a symlink loop) is lock-io-error, not someone's lock", async () => {
    await mkdir(join(root, ".plumb"), { recursive: true });
    await symlink(lockPath, lockPath);
    await expect(readLockDir(lockPath)).rejects.toMatchObject({ code: "ELOOP" });
    await expect(
      acquireStateLock({ statusDir: join(root, ".plumb", "status") }, { command: "plumb apply" }),
    ).rejects.toMatchObject({ code: "lock-io-error" });
  });

  it("a file at the lock's path is no one's lock: lock-io-error naming it and the fix, never taken over", async () => {
    await mkdir(join(root, ".plumb"), { recursive: true });
    await writeFile(lockPath, "the user's notes\n");
    const target = { statusDir: join(root, ".plumb", "status") };
    const refused = {
      code: "lock-io-error",
      message: expect.stringContaining(`${lockPath} is a file, not a state lock`),
    };
    await expect(readLockDir(lockPath)).rejects.toMatchObject(refused);
    // Waited for (a lease of 1 s, watched over 3 s): it was renamed aside and deleted as a stale lock.
    const clock = fakeClock();
    await expect(
      acquireStateLock(target, {
        command: "plumb apply",
        leaseMs: 1_000,
        timeoutMs: 3_000,
        retryMs: 100,
        clock,
        monotonic: () => clock.now(),
      }),
    ).rejects.toMatchObject({ ...refused, message: expect.stringContaining(`rm ${lockPath}`) });
    await expect(readStateLock(target)).rejects.toMatchObject(refused); // plumb unlock, status
    expect(await readFile(lockPath, "utf8")).toBe("the user's notes\n");
    expect(await readdir(join(root, ".plumb"))).toEqual(["status.lock"]);
  });

  it("shows the holder's latest renewal even beside a stray file", async () => {
    const holder = await held();
    expect(await renewLockDir(lockPath, holder.id, 0)).toBe(true);
    await writeFile(join(lockPath, "a-stray-file"), "");
    expect(await readLockDir(lockPath)).toEqual({
      holder: { ...holder, lease_ms: 30_000 },
      token: `beat-${holder.id}-1`,
      released: false,
    });
  });

  it("a directory with a holder record but no beat is that holder's lock, not an older plumb's", async () => {
    const holder = await held();
    await rm(join(lockPath, `beat-${holder.id}-0`));
    const seen = await readLockDir(lockPath);
    expect(seen).toMatchObject({ holder: { id: holder.id }, released: false });
    expect(seen?.legacy).toBeUndefined();
  });
});

describe("an empty lock directory beside a prepared one (a claim, or an older plumb's lock)", () => {
  const prepared = (id: string) => `${lockPath}.new-${id}`;

  it("a prepared directory without its record (a crash while preparing) names no one: an older plumb's lock", async () => {
    await mkdir(prepared("gone"), { recursive: true });
    await mkdir(lockPath);
    const seen = await readLockDir(lockPath);
    expect(seen).toMatchObject({ holder: null, released: false, legacy: {} });
    expect(seen?.token).toMatch(/^legacy-/);
  });

  it("a prepared record that is not a holder names no one either", async () => {
    await mkdir(prepared("garbled"), { recursive: true });
    await writeFile(join(prepared("garbled"), "holder.json"), "{ not json");
    await mkdir(lockPath);
    expect((await readLockDir(lockPath))?.token).toMatch(/^legacy-/);
  });

  it("a claim made up to 5 s after its prepared record is that holder's", async () => {
    const holder = { ...newHolder("plumb apply", Date.now()), host: "build-7" };
    await mkdir(prepared(holder.id), { recursive: true });
    await writeFile(join(prepared(holder.id), "holder.json"), JSON.stringify(holder));
    await mkdir(lockPath);
    const claimedAt = 1_700_000_000; // seconds: whole, so both mtimes are exact
    await utimes(join(prepared(holder.id), "holder.json"), claimedAt - 5, claimedAt - 5);
    await utimes(lockPath, claimedAt, claimedAt);
    expect(await readLockDir(lockPath)).toMatchObject({
      holder: { id: holder.id },
      token: `claim-${holder.id}`,
    });
  });
});

describe("the holder's renewal", () => {
  it("moves its beat; false once the beat is gone (taken over); a disk error is thrown, not a loss", async () => {
    const holder = await held();
    expect(await renewLockDir(lockPath, holder.id, 0)).toBe(true);
    expect(await names()).toEqual([`beat-${holder.id}-1`, "holder.json"]);
    expect(await renewLockDir(lockPath, holder.id, 0)).toBe(false);
    await fileInsteadOfLock();
    await expect(renewLockDir(lockPath, holder.id, 1)).rejects.toMatchObject({ code: "ENOTDIR" });
  });

  it("on the spot: true when it renews now, or when a renewal in flight already did; false when taken", async () => {
    const holder = await held();
    expect(renewLockDirSync(lockPath, holder.id, 0)).toBe(true);
    expect(await names()).toEqual([`beat-${holder.id}-1`, "holder.json"]);
    expect(await renewLockDir(lockPath, holder.id, 1)).toBe(true); // the async one, first
    expect(renewLockDirSync(lockPath, holder.id, 1)).toBe(true);
    expect(await names()).toEqual([`beat-${holder.id}-2`, "holder.json"]);
    expect(renewLockDirSync(lockPath, holder.id, 0)).toBe(false);
    expect(renewLockDirSync(lockPath, "another-holder", 2)).toBe(false);
  });
});

describe("the holder's release", () => {
  it("removes its own lock", async () => {
    const holder = await held();
    await releaseLockDir(lockPath, holder.id, 0);
    expect(await readLockDir(lockPath)).toBeNull();
  });

  it("leaves a lock that is someone else's by now as it is", async () => {
    const holder = await held();
    const before = await names();
    await releaseLockDir(lockPath, "a-holder-taken-over", 0);
    await releaseLockDir(lockPath, holder.id, 5);
    expect(await names()).toEqual(before);
  });

  it("a disk error is thrown (the caller decides), not taken for a lock already gone", async () => {
    const holder = await held();
    await fileInsteadOfLock();
    await expect(releaseLockDir(lockPath, holder.id, 0)).rejects.toMatchObject({ code: "ENOTDIR" });
  });
});

describe("a waiter's takeover of the lock it watched", () => {
  it("removes the lock still showing the watched token", async () => {
    const holder = await held();
    expect(await takeOverLockDir(lockPath, `beat-${holder.id}-0`)).toBe(true);
    expect(await readLockDir(lockPath)).toBeNull();
    expect(await readdir(join(root, ".plumb"))).toEqual([]);
  });

  it("leaves a lock renewed meanwhile as it was, never moved: no moment without it", async () => {
    const holder = await held();
    await renewLockDir(lockPath, holder.id, 0);
    // Any rename in the lock's parent (the lock moved aside and back) would move its mtime.
    const parent = join(root, ".plumb");
    await utimes(parent, 1_000, 1_000);
    expect(await takeOverLockDir(lockPath, `beat-${holder.id}-0`)).toBe(false);
    expect(await names()).toEqual([`beat-${holder.id}-1`, "holder.json"]);
    expect(await readdir(parent)).toEqual(["status.lock"]);
    expect((await stat(parent)).mtimeMs).toBe(1_000_000);
    // The holder renews on as before.
    expect(await renewLockDir(lockPath, holder.id, 1)).toBe(true);
  });

  it("releases the watched beat first: the holder's next renewal fails, its lock is gone", async () => {
    const holder = await held();
    expect(await takeOverLockDir(lockPath, `beat-${holder.id}-0`)).toBe(true);
    expect(await renewLockDir(lockPath, holder.id, 0)).toBe(false);
    expect(await readdir(join(root, ".plumb"))).toEqual([]);
  });

  it("a lock gone meanwhile is no takeover; a path that cannot be renamed is an error", async () => {
    expect(await takeOverLockDir(lockPath, "beat-x-0")).toBe(false);
    const file = join(root, "a-file");
    await writeFile(file, "");
    await expect(takeOverLockDir(join(file, "status.lock"), "beat-x-0")).rejects.toMatchObject({
      code: "ENOTDIR",
      syscall: "rename",
    });
  });

  it("an older plumb's empty lock is removed even if its mtime moved since the look", async () => {
    await mkdir(lockPath, { recursive: true });
    expect(await takeOverLockDir(lockPath, "legacy-1000")).toBe(true);
    expect(await readLockDir(lockPath)).toBeNull();
  });

  it("an older plumb's lock that appeared where a plumb's was watched is left", async () => {
    await mkdir(lockPath, { recursive: true });
    expect(await takeOverLockDir(lockPath, "beat-x-0")).toBe(false);
    expect(await readLockDir(lockPath)).toMatchObject({ legacy: {} });
  });

  it("a plumb's lock that appeared where an older plumb's was watched is left", async () => {
    const holder = await held();
    expect(await takeOverLockDir(lockPath, "legacy-1000")).toBe(false);
    expect(await takeOverLockDir(lockPath, `claim-${holder.id}`)).toBe(false);
    expect(await readLockDir(lockPath)).toMatchObject({ holder: { id: holder.id } });
  });
});

describe("plumb unlock --force of a holder that may still run (endLockDir)", () => {
  it("renames its beat to a forced one: read as forced, its renewal and release fail, the lock stays", async () => {
    const holder = await held();
    expect(await endLockDir(lockPath, `beat-${holder.id}-0`)).toBe(true);
    const seen = await readLockDir(lockPath);
    expect(seen).toMatchObject({ holder: { id: holder.id }, forced: true, released: false });
    expect(seen?.token).toMatch(/^beat-forced-[0-9a-f-]{36}$/);
    expect(await renewLockDir(lockPath, holder.id, 0)).toBe(false);
    await releaseLockDir(lockPath, holder.id, 0);
    expect(await readLockDir(lockPath)).toMatchObject({ token: seen?.token, forced: true });
  });

  it("false when that beat is gone (renewed meanwhile, or no lock); a disk error is thrown", async () => {
    const holder = await held();
    await renewLockDir(lockPath, holder.id, 0);
    expect(await endLockDir(lockPath, `beat-${holder.id}-0`)).toBe(false);
    expect(await readLockDir(lockPath)).toMatchObject({ token: `beat-${holder.id}-1`, released: false });
    await rm(lockPath, { recursive: true, force: true });
    expect(await endLockDir(lockPath, `beat-${holder.id}-1`)).toBe(false);
    await fileInsteadOfLock();
    await expect(endLockDir(lockPath, "beat-x-0")).rejects.toMatchObject({ code: "ENOTDIR" });
  });

  it("a lock that is not plumb's own is never read as forced", async () => {
    const holder = await held();
    expect(await readLockDir(lockPath)).not.toHaveProperty("forced");
    await renewLockDir(lockPath, holder.id, 0);
    expect(await readLockDir(lockPath)).not.toHaveProperty("forced");
  });
});

describe("plumb unlock --force (removeLockDir)", () => {
  it("removes a lock whose holder renews all the while; the holder's next renewal finds it gone", async () => {
    const holder = await held();
    // A holder renewing as fast as it can (the test holder's 10 ms, on a loaded machine, hit it):
    // removed in place, rm listed the directory, a renewal renamed a beat in it, and rm failed with
    // ENOTEMPTY (a script doing just this: 196 of 200 removals failed; moved aside first: none).
    let n = 0;
    let renewing = true;
    const renewer = (async () => {
      while (renewing && (await renewLockDir(lockPath, holder.id, n))) n++;
    })();
    for (let i = 0; i < 20 && n < 5; i++) await new Promise((r) => setTimeout(r, 5));
    await removeLockDir(lockPath);
    renewing = false;
    await renewer;
    expect(await readLockDir(lockPath)).toBeNull();
    expect(await renewLockDir(lockPath, holder.id, n)).toBe(false);
    expect((await readdir(root, { recursive: true })).filter((f) => f.includes("status.lock"))).toEqual([]);
  });
});

import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readLockDir } from "../../src/lock/local/lock-dir.js";
import { acquireLocalLock, lockPathOf } from "../../src/lock/local/local-lock.js";
import { forceLocalUnlock, removeLockDir } from "../../src/lock/local/local-unlock.js";

// What is found at or above the lock's path that no plumb put there, as the lock directory's own
// operations see it: a parent that is a file, a link to a file, a FIFO; and unlock --force of a
// lock whose holder's prepared directory is still beside it.

let root: string;
let statusDir: string;
let lockPath: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-lock-dir-paths-"));
  statusDir = join(root, ".plumb", "status");
  lockPath = lockPathOf({ statusDir });
  await mkdir(join(root, ".plumb"));
});
afterEach(() => rm(root, { recursive: true, force: true }));

describe("a lock path whose parent is a file", () => {
  const underFile = async () => {
    await writeFile(join(root, "file"), "not a directory\n");
    return join(root, "file", "status.lock");
  };

  it("is not refused as someone's lock: the look fails with the system's ENOTDIR", async () => {
    await expect(readLockDir(await underFile())).rejects.toMatchObject({
      code: "ENOTDIR",
      syscall: "scandir",
    });
  });

  it("cannot be removed by --force either: ENOTDIR, not a lock already gone", async () => {
    await expect(removeLockDir(await underFile())).rejects.toMatchObject({
      code: "ENOTDIR",
      syscall: "rename",
    });
  });
});

describe("something no plumb makes at the lock's path", () => {
  it("a symbolic link to a file is refused as such, with the fix", async () => {
    await writeFile(join(root, "notes.txt"), "the user's notes\n");
    await symlink(join(root, "notes.txt"), lockPath);
    await expect(readLockDir(lockPath)).rejects.toMatchObject({
      code: "lock-io-error",
      message: expect.stringMatching(
        new RegExp(
          `^${lockPath.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is a symbolic link to no directory, not a state lock: `,
        ),
      ),
    });
  });

  it("a FIFO is refused as neither a file nor a directory (and never opened: no waiter blocks)", async () => {
    execFileSync("mkfifo", [lockPath]);
    await expect(readLockDir(lockPath)).rejects.toMatchObject({
      code: "lock-io-error",
      message: expect.stringContaining(`${lockPath} is neither a file nor a directory, not a state lock: `),
    });
  });
});

describe("plumb unlock --force of a held lock", () => {
  it("removes the holder's prepared directory beside it too, and works without one", async () => {
    const lock = await acquireLocalLock({ statusDir }, { command: "plumb apply" });
    // A crashed claim of the same holder left its prepared directory (holder record inside).
    const prepared = `${lockPath}.new-${lock.holder.id}`;
    await mkdir(prepared);
    await writeFile(join(prepared, "holder.json"), JSON.stringify(lock.holder));
    expect((await forceLocalUnlock({ statusDir }))?.id).toBe(lock.holder.id);
    // The lock itself stays, ended (force-unlock.test.ts), and a second --force works without one.
    expect(await readdir(join(root, ".plumb"))).toEqual(["status.lock"]);
    expect((await forceLocalUnlock({ statusDir }))?.id).toBe(lock.holder.id);
    expect(await readdir(join(root, ".plumb"))).toEqual(["status.lock"]);
    await lock.release();
  });
});

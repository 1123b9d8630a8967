import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PlumbError } from "../../src/errors.js";
import { newHolder } from "../../src/lock/holder.js";
import { createLockDir } from "../../src/lock/local/lock-dir.js";
import { acquireLocalLock, lockPathOf } from "../../src/lock/local/local-lock.js";
import { forceLocalUnlock, readLocalLock } from "../../src/lock/local/local-unlock.js";
import { storeUnwritableError } from "../../src/lock/lock-errors.js";

// The local lock's less travelled paths: a store that cannot be written (the error's words and
// which directory to fix), a lock without a holder record, a lock committed to git, a path whose
// parent is a file, and --force on a file at the lock's path.

let root: string;
let statusDir: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-lock-paths-"));
  statusDir = join(root, ".plumb", "status");
});
afterEach(() => rm(root, { recursive: true, force: true }));

const denied = () => Object.assign(new Error("EACCES: permission denied, mkdir"), { code: "EACCES" });

describe("storeUnwritableError", () => {
  it("names the command's own store, why, the nearest existing directory to make writable, exit 64", () => {
    const deep = join(root, "a", "b", ".plumb", "status");
    const cause = denied();
    const error = storeUnwritableError(deep, cause);
    expect(error).toBeInstanceOf(PlumbError);
    expect(error.code).toBe("store-unwritable");
    expect(error.exitCode).toBe(64);
    expect(error.cause).toBe(cause);
    expect(error.message).toBe(
      `the status store ${deep} is this command's own (PATH's, or --status-dir): its lock ${deep}.lock cannot be taken: permission denied (EACCES). ` +
        `Its records are written ahead of every request, under that lock, so nothing is sent. ` +
        `Fix: make ${root} writable for this user (or run as the user who applied there), or pass --status-dir to a directory this user can write`,
    );
  });

  it("names the store's own parent when it exists", async () => {
    await mkdir(join(root, ".plumb"));
    expect(storeUnwritableError(statusDir, denied()).message).toContain(
      `Fix: make ${join(root, ".plumb")} writable for this user`,
    );
  });

  it("stops at the file system's root when nothing on the way exists", () => {
    const nowhere = join("/", `plumb-no-such-${process.pid}-${Date.now()}`, ".plumb", "status");
    expect(storeUnwritableError(nowhere, denied()).message).toContain("Fix: make / writable for this user");
  });

  it("names a store nearby as such, with the command it records for", () => {
    const error = storeUnwritableError(statusDir, denied(), "plumb apply ./app");
    expect(error.code).toBe("nearby-store-unwritable");
    expect(error.exitCode).toBe(64);
    expect(error.message).toBe(
      `the status store ${statusDir} is a store nearby (above or below the manifests, docs/status.md "Stores above and below"): it records objects plumb apply ./app sends too, and its lock ${statusDir}.lock cannot be taken: permission denied (EACCES). ` +
        `Without that lock plumb cannot know that no other writer is sending the same changes, so nothing is sent. ` +
        `Fix: make ${root} writable for this user (or run as the user who applied there), or, if nothing is applied from there any more, remove that store (its records only save re-sending secrets)`,
    );
  });
});

/** A lock with a renewal but no holder record (written by hand, or cut short). */
async function lockWithoutHolder(): Promise<void> {
  const lockPath = lockPathOf({ statusDir });
  await mkdir(lockPath, { recursive: true });
  await writeFile(join(lockPath, "beat-someone-0"), "");
}

describe("a lock without a holder record", () => {
  it("is held by another plumb process: a waiter says so, and does not take it", async () => {
    await lockWithoutHolder();
    const waiting = acquireLocalLock({ statusDir }, { command: "plumb apply", timeoutMs: 0 });
    await expect(waiting).rejects.toMatchObject({
      code: "state-locked",
      message: expect.stringContaining(`the status store ${statusDir} is held by another plumb process;`),
    });
    expect(await readdir(lockPathOf({ statusDir }))).toEqual(["beat-someone-0"]);
  });

  it("reads as a holder that names no one", async () => {
    await lockWithoutHolder();
    expect(await readLocalLock({ statusDir })).toEqual({
      id: "",
      host: "unknown",
      pid: 0,
      command: "plumb",
      since: "",
    });
  });
});

const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, stdio: "pipe" });

describe("a lock committed to git", () => {
  beforeEach(async () => {
    git(root, "init", "-q");
    // A live holder (this very process): only its being tracked makes it no one's lock.
    await createLockDir(lockPathOf({ statusDir }), newHolder("plumb apply", Date.now()), 30_000);
    git(root, "add", "-A");
  });

  it("is no holder to plumb status", async () => {
    expect(await readLocalLock({ statusDir })).toBeNull();
  });

  it("is taken at once, and said with the fix", async () => {
    const said: string[] = [];
    const lock = await acquireLocalLock(
      { statusDir },
      { command: "plumb apply", timeoutMs: 0, say: (line) => said.push(line) },
    );
    expect(said).toEqual([
      `the state lock ${lockPathOf({ statusDir })} is tracked by git: a lock committed to the repository names no running process, so it is not trusted: this run takes the lock in its place; untrack the store (git rm -r --cached .plumb) and add .plumb/ to .gitignore`,
    ]);
    expect((await readLocalLock({ statusDir }))?.id).toBe(lock.holder.id);
    await lock.release();
  });

  it("is taken by a run that says nothing too (no say given)", async () => {
    const lock = await acquireLocalLock({ statusDir }, { command: "plumb apply", timeoutMs: 0 });
    expect((await readLocalLock({ statusDir }))?.id).toBe(lock.holder.id);
    await lock.release();
  });
});

describe("a lock path under a file", () => {
  it("has no holder (nothing can be locked there)", async () => {
    await mkdir(root, { recursive: true });
    await writeFile(join(root, "file"), "not a directory\n");
    expect(await readLocalLock({ statusDir: join(root, "file", "status") })).toBeNull();
  });
});

describe("unlock --force on a file at the lock's path", () => {
  it("removes it and names no holder", async () => {
    const lockPath = lockPathOf({ statusDir });
    await mkdir(dirname(lockPath), { recursive: true });
    await writeFile(lockPath, "something else's\n");
    await expect(readLocalLock({ statusDir })).rejects.toMatchObject({ code: "lock-io-error" });
    expect(await forceLocalUnlock({ statusDir })).toBeNull();
    await expect(stat(lockPath)).rejects.toMatchObject({ code: "ENOENT" });
  });
});

import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { committedLock, UNTRACK_LOCK } from "../../src/lock/committed-lock.js";
import { committedStateLock } from "../../src/lock/index.js";

// A state lock committed to the repository is a copy of a lock, not one (committed-lock.ts,
// docs/status.md "State lock"): told apart by asking a real git repository what it tracks.

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-committed-lock-"));
});
afterEach(() => rm(root, { recursive: true, force: true }));

const git = (...args: string[]) => execFileSync("git", args, { cwd: root, stdio: "pipe" });
const statusDir = () => join(root, ".plumb", "status");
const lockPath = () => `${statusDir()}.lock`;

/** A lock directory as a holder leaves it: its record and its renewal file. */
async function lockWith(...names: string[]) {
  await mkdir(lockPath(), { recursive: true });
  for (const name of names) await writeFile(join(lockPath(), name), "{}\n");
}

describe("a state lock committed to git", () => {
  it("every file of the lock tracked: not trusted, and said so naming the lock", async () => {
    git("init", "-q");
    await lockWith(".lock.json", "beat-abc");
    git("add", "-f", ".plumb");
    expect(await committedLock(lockPath())).toBe(
      `the state lock ${lockPath()} is tracked by git: a lock committed to the repository names no running process, so it is not trusted`,
    );
  });

  it("the store's lock as status and unlock are told of it: why, then what to do", async () => {
    git("init", "-q");
    await lockWith(".lock.json", "beat-abc");
    git("add", "-f", ".plumb");
    const why = await committedStateLock({ statusDir: statusDir() });
    expect(why).toContain(`the state lock ${lockPath()} is tracked by git`);
    expect(why).toMatch(new RegExp(`; ${UNTRACK_LOCK.replace(/[.()]/g, "\\$&")}$`));
  });

  it("a file git does not track (a holder's renewal since the commit): a lock, trusted", async () => {
    git("init", "-q");
    await lockWith(".lock.json", "beat-abc");
    git("add", "-f", ".plumb");
    await writeFile(join(lockPath(), "beat-def"), "");
    expect(await committedLock(lockPath())).toBeUndefined();
    expect(await committedStateLock({ statusDir: statusDir() })).toBeUndefined();
  });

  it("only some other file tracked, the renewal not: trusted", async () => {
    git("init", "-q");
    await lockWith(".lock.json");
    git("add", "-f", ".plumb");
    await lockWith("beat-new");
    expect(await committedLock(lockPath())).toBeUndefined();
  });

  it("nothing of the lock tracked in a repository: trusted", async () => {
    git("init", "-q");
    await lockWith(".lock.json", "beat-abc");
    expect(await committedLock(lockPath())).toBeUndefined();
  });

  it("an empty lock directory (a claim) in a repository is no committed lock", async () => {
    git("init", "-q");
    await lockWith();
    expect(await committedLock(lockPath())).toBeUndefined();
  });

  it("no lock directory at all: nothing to say", async () => {
    git("init", "-q");
    expect(await committedLock(lockPath())).toBeUndefined();
  });

  it("outside any repository (git cannot answer): trusted", async () => {
    await lockWith(".lock.json", "beat-abc");
    expect(await committedLock(lockPath())).toBeUndefined();
  });
});

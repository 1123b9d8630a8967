import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { simpleGit } from "simple-git";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { scratchPrune } from "../../src/lock/branch/scratch-prune.js";

// A lease's scratch repository is pruned every `every` calls, of loose objects older than the
// lease: what git is asked, when, and that it really removes an old unreferenced object only.

const recorder = () => {
  const calls: string[][] = [];
  return { calls, git: { raw: async (args: string[]) => (calls.push(args), "") } };
};

describe("scratchPrune", () => {
  it("prunes at every `every`-th call, not before", async () => {
    const { calls, git } = recorder();
    const prune = scratchPrune(git as never, 30_000, 3);
    await prune();
    await prune();
    expect(calls).toEqual([]);
    await prune();
    expect(calls).toEqual([["prune", "--expire=30.seconds.ago"]]);
    await prune();
    await prune();
    expect(calls).toHaveLength(1);
    await prune();
    expect(calls).toHaveLength(2);
  });

  it("expires objects older than the lease, in whole seconds rounded up", async () => {
    const { calls, git } = recorder();
    await scratchPrune(git as never, 1_500, 1)();
    expect(calls).toEqual([["prune", "--expire=2.seconds.ago"]]);
  });

  it("expires every unreferenced object for a lease of 0 or less", async () => {
    const { calls, git } = recorder();
    await scratchPrune(git as never, 0, 1)();
    await scratchPrune(git as never, -5, 1)();
    expect(calls).toEqual([
      ["prune", "--expire=now"],
      ["prune", "--expire=now"],
    ]);
  });

  it("never fails: a prune that fails leaves the lease going", async () => {
    const git = { raw: () => Promise.reject(new Error("fatal: not a git repository")) };
    await expect(scratchPrune(git as never, 30_000, 1)()).resolves.toBeUndefined();
  });

  describe("in a real repository", () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), "plumb-scratch-prune-"));
      execFileSync("git", ["init", "-q"], { cwd: dir });
    });
    afterEach(() => rm(dir, { recursive: true, force: true }));

    const looseObject = (text: string) => {
      const hash = execFileSync("git", ["hash-object", "-w", "--stdin"], { cwd: dir, input: text })
        .toString()
        .trim();
      return join(dir, ".git", "objects", hash.slice(0, 2), hash.slice(2));
    };

    it("removes an unreferenced object older than the lease and keeps a younger one", async () => {
      const old = looseObject("an old renewal\n");
      const young = looseObject("a renewal being pushed\n");
      const hourAgo = new Date(Date.now() - 3_600_000);
      await utimes(old, hourAgo, hourAgo);
      await scratchPrune(simpleGit(dir), 60_000, 1)();
      expect(existsSync(old)).toBe(false);
      expect(existsSync(young)).toBe(true);
    });
  });
});

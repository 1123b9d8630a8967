import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, expect, it } from "vitest";
import { simpleGit } from "../../src/git/simple-git.js";
import { EMPTY_TREE_SHA1, emptyTree } from "../../src/lock/branch/remote.js";

// The lease commits' tree (remote.ts emptyTree): in a SHA-1 scratch repository the empty tree's
// well-known id, no git process (one fewer per lease taken or read); in another object format the
// tree written by git. A commit of the unwritten empty tree still pushes to a remote that checks
// every object it receives.

const run = promisify(execFile);
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-empty-tree-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

type Git = Parameters<typeof emptyTree>[1];
const noGit = {
  raw: async (args: string[]): Promise<string> => {
    throw new Error(`git ${args.join(" ")} was run`);
  },
} as unknown as Git;

it("a SHA-1 scratch repository: the empty tree's id, without a git process; its commits push to a checking remote", async () => {
  const scratch = join(dir, "scratch");
  await run("git", ["init", "--quiet", "--bare", scratch]);
  const tree = await emptyTree(scratch, noGit);
  expect(tree).toBe(EMPTY_TREE_SHA1);

  const remote = join(dir, "remote.git");
  await run("git", ["init", "--quiet", "--bare", remote]);
  await run("git", ["-C", remote, "config", "receive.fsckObjects", "true"]);
  const id = ["-c", "user.name=t", "-c", "user.email=t@t"];
  const commit = (await run("git", ["-C", scratch, ...id, "commit-tree", tree, "-m", "{}"])).stdout.trim();
  await run("git", ["-C", scratch, "push", "--quiet", remote, `${commit}:refs/plumb/locks/b`]);
  const pushed = (await run("git", ["-C", remote, "cat-file", "-p", "refs/plumb/locks/b"])).stdout;
  expect(pushed).toContain(`tree ${EMPTY_TREE_SHA1}`);
  await run("git", ["-C", remote, "fsck", "--full", "--strict"]);
});

it("another object format (GIT_DEFAULT_HASH=sha256): the empty tree written by git, in that format", async () => {
  const scratch = join(dir, "scratch");
  await run("git", ["init", "--quiet", "--bare", scratch], {
    env: { ...process.env, GIT_DEFAULT_HASH: "sha256" },
  });
  const tree = await emptyTree(scratch, simpleGit(scratch));
  expect(tree).toBe("6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321");
  await run("git", ["-C", scratch, "cat-file", "-e", tree]);
});

it("a scratch repository whose config cannot be read: the tree asked of git", async () => {
  const calls: string[][] = [];
  const git = {
    raw: async (args: string[]) => {
      calls.push(args);
      return "TREE\n";
    },
  };
  expect(await emptyTree(join(dir, "missing"), git as unknown as Git)).toBe("TREE");
  expect(calls).toEqual([["hash-object", "-t", "tree", "-w", "/dev/null"]]);
});

import { execFile } from "node:child_process";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { promisify } from "node:util";
import { afterEach, expect, it } from "vitest";
import { simpleGit } from "simple-git";
import { onBranchWorktree, removeStaleWorktrees } from "../../src/git/branch-worktree.js";
import { createCheckoutQueue } from "../../src/git/checkout-queue.js";

// Branches rebuilt in temporary worktrees of one checkout, as each environment's drift check
// (--drift-branch) and promotion.auto do at the same moment: git reads every worktree's files when
// it adds one, and one being added beside it could be read half-written (CI: an environment's drift
// branch missing after a drift check). They take turns.

const run = promisify(execFile);
const git = async (cwd: string, ...args: string[]) =>
  (await run("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd })).stdout.trim();

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function checkout(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "plumb-branch-worktree-"));
  dirs.push(dir);
  await git(dir, "init", "--quiet", "--initial-branch=main");
  await writeFile(join(dir, "app.yaml"), "image: a\n");
  await git(dir, "add", ".");
  await git(dir, "commit", "--quiet", "-m", "manifests");
  return dir;
}

/** Writes `name` in the worktree and commits it on its branch. */
const commitIn = async (worktree: string, name: string) => {
  await writeFile(join(worktree, `${name}.yaml`), `image: ${name}\n`);
  await git(worktree, "add", ".");
  await git(worktree, "commit", "--quiet", "-m", name);
};

const worktrees = async (repo: string) => (await git(repo, "worktree", "list")).split("\n").length;

it("a second worktree of the same checkout waits until the first is used and removed", async () => {
  const repoRoot = await checkout();
  const queue = createCheckoutQueue();
  const prefix = (name: string) => `${basename(repoRoot)}-${name}-`;
  let open = () => undefined as void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const order: string[] = [];
  const first = onBranchWorktree(
    { repoRoot, gitEnv: undefined, queue, branch: "drift/prod", prefix: prefix("prod") },
    async (worktree) => {
      order.push("prod started");
      await gate;
      await commitIn(worktree, "prod");
      order.push("prod done");
    },
  );
  const second = onBranchWorktree(
    { repoRoot, gitEnv: undefined, queue, branch: "drift/staging", prefix: prefix("staging") },
    async (worktree) => {
      order.push("staging started");
      await commitIn(worktree, "staging");
    },
  );
  // The first is inside its worktree (its add took a git process: the second, not waiting, would
  // have made its directory long before). The checkout has one worktree besides its own.
  for (let i = 0; i < 1_000 && order.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  expect(order).toEqual(["prod started"]);
  expect((await readdir(tmpdir())).filter((f) => f.startsWith(prefix("staging")))).toEqual([]);
  expect(await worktrees(repoRoot)).toBe(2);
  open();
  await Promise.all([first, second]);
  expect(order).toEqual(["prod started", "prod done", "staging started"]);
  expect(await worktrees(repoRoot)).toBe(1); // both removed
  expect(await git(repoRoot, "show", "drift/prod:prod.yaml")).toBe("image: prod");
  expect(await git(repoRoot, "show", "drift/staging:staging.yaml")).toBe("image: staging");
});

it("six environments writing their branches at once each get theirs (a failed one still frees the turn)", async () => {
  const repoRoot = await checkout();
  const queue = createCheckoutQueue();
  const names = ["a", "b", "c", "d", "e", "f"];
  // Unserialised, git 2.39 failed one add in about one round of two of six adds at once.
  for (let round = 0; round < 3; round++) {
    const results = await Promise.allSettled([
      onBranchWorktree(
        { repoRoot, gitEnv: undefined, queue, branch: "drift/broken", prefix: "plumb-test-" },
        () => Promise.reject(new Error("writing failed")),
      ),
      ...names.map((name) =>
        onBranchWorktree(
          { repoRoot, gitEnv: undefined, queue, branch: `drift/${name}`, prefix: "plumb-test-" },
          (worktree) => commitIn(worktree, `${name}-${round}`),
        ),
      ),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", ...names.map(() => "fulfilled")]);
    for (const name of names)
      expect(await git(repoRoot, "show", `drift/${name}:${name}-${round}.yaml`)).toBe(
        `image: ${name}-${round}`,
      );
  }
  expect(await worktrees(repoRoot)).toBe(1);
});

it("removes only the worktrees of its prefix whose plumb is gone; a live one's and others stay", async () => {
  const dir = await checkout();
  const { pid: gone } = await new Promise<{ pid: number }>((resolve) => {
    const child = execFile(process.execPath, ["-e", ""]);
    child.once("exit", () => resolve({ pid: child.pid! }));
  });
  const add = async (name: string) => {
    const path = await mkdtemp(join(tmpdir(), name));
    dirs.push(path);
    await git(dir, "worktree", "add", "--quiet", "--detach", path, "HEAD");
    return path;
  };
  const stale = await add(`plumb-drift-${gone}-`);
  const live = await add(`plumb-drift-${process.pid}-`);
  const otherPrefix = await add(`plumb-other-${gone}-`);
  const users = await add("my-worktree-");
  await removeStaleWorktrees(simpleGit(dir), "plumb-drift-");
  const listed = await git(dir, "worktree", "list", "--porcelain");
  expect(listed).not.toContain(basename(stale));
  for (const kept of [live, otherPrefix, users]) expect(listed).toContain(basename(kept));
  await expect(readdir(stale)).rejects.toMatchObject({ code: "ENOENT" });
});

import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, expect, it } from "vitest";
import { onBranchWorktree } from "../../src/git/branch-worktree.js";
import { createCheckoutQueue } from "../../src/git/checkout-queue.js";
import { openGitSource } from "../../src/git/git-source.js";
import { loadStatusFromBranch } from "../../src/git/records/load-status-branch.js";
import { openManifestSource } from "../../src/controller/source/manifest-source.js";
import { createLogger } from "../../src/logger.js";
import { repoTemplate } from "../support/repo-template.js";

// Everything the controller runs in its checkout takes turns in the checkout's queue: the poll's
// fetch and reset, the status branch's fetch, the drift and promotion branches' worktrees. Without
// it the status branch's fetch, landing between the poll's fetch and its read of FETCH_HEAD, had
// the poll reset the checkout to the status branch (1 round in 20 here; every manifest gone).

const run = promisify(execFile);
const git = async (cwd: string, ...args: string[]) =>
  (await run("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd })).stdout.trim();

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A remote with the manifests on main and one record on plumb-status, and a clone that pushes to main. */
async function remote(): Promise<{ tmp: string; origin: string; author: string }> {
  const tmp = await mkdtemp(join(tmpdir(), "plumb-checkout-queue-"));
  dirs.push(tmp);
  await repositories.copyTo(tmp);
  return { tmp, origin: join(tmp, "origin.git"), author: join(tmp, "author") };
}

// Made once (14 git commands), copied per test (test/support/repo-template.ts).
const repositories = repoTemplate(async (tmp) => {
  const origin = join(tmp, "origin.git");
  const author = join(tmp, "author");
  await git(tmp, "init", "--quiet", "--bare", "--initial-branch=main", origin);
  await git(tmp, "clone", "--quiet", origin, author);
  await writeFile(join(author, "app.yaml"), "image: 0\n");
  await git(author, "add", ".");
  await git(author, "commit", "--quiet", "-m", "manifests 0");
  await git(author, "push", "--quiet", "origin", "HEAD:main");
  await git(author, "checkout", "--quiet", "--orphan", "plumb-status");
  await git(author, "rm", "-rf", "--quiet", ".");
  await mkdir(join(author, ".plumb/status"), { recursive: true });
  await writeFile(join(author, ".plumb/status/deployment.app.json"), "{}\n");
  await git(author, "add", ".");
  await git(author, "commit", "--quiet", "-m", "status");
  await git(author, "push", "--quiet", "origin", "HEAD:plumb-status");
  await git(author, "checkout", "--quiet", "main");
});
afterAll(() => repositories.remove());

it("a poll, the status branch's fetch and a drift worktree at once take turns: no git failure, the checkout follows main", async () => {
  const { tmp, origin, author } = await remote();
  const source = await openGitSource({
    url: origin,
    branch: "main",
    workDir: join(tmp, "checkout"),
    env: process.env,
  });
  const repoRoot = source.checkoutDir;
  const failures: string[] = [];
  try {
    for (let round = 1; round <= 20; round++) {
      await writeFile(join(author, "app.yaml"), `image: ${round}\n`);
      await git(author, "commit", "--quiet", "-am", `manifests ${round}`);
      await git(author, "push", "--quiet", "origin", "HEAD:main");
      const results = await Promise.allSettled([
        source.fetch(),
        loadStatusFromBranch({ root: repoRoot, branch: "plumb-status", queue: source.queue }),
        onBranchWorktree(
          {
            repoRoot,
            gitEnv: undefined,
            queue: source.queue,
            branch: "drift/prod",
            prefix: "plumb-queue-test-",
          },
          async (worktree) => {
            await writeFile(join(worktree, "drift.yaml"), `image: ${round}\n`);
            await git(worktree, "add", ".");
            await git(worktree, "commit", "--quiet", "-m", `drift ${round}`);
            await git(worktree, "push", "--quiet", "--force", "origin", "HEAD:refs/heads/drift/prod");
          },
        ),
      ]);
      const [polled, status] = results;
      for (const r of results)
        if (r.status === "rejected") failures.push(`round ${round}: ${String(r.reason)}`);
      if (polled.status === "fulfilled" && !polled.value)
        failures.push(`round ${round}: the poll saw no new commit`);
      if (status.status === "fulfilled" && status.value.objects.size + status.value.problems.length !== 1)
        failures.push(`round ${round}: the status branch's record was not read`);
      const at = await git(repoRoot, "log", "-1", "--format=%s");
      if (at !== `manifests ${round}`) failures.push(`round ${round}: the checkout shows "${at}"`);
      if (source.commit() !== (await git(author, "rev-parse", "HEAD")))
        failures.push(`round ${round}: the source's commit is not main's`);
      expect(await git(origin, "show", "drift/prod:drift.yaml").catch(String)).toBe(`image: ${round}`);
    }
  } finally {
    await source.close();
  }
  expect(failures).toEqual([]);
  expect((await git(repoRoot, "worktree", "list")).split("\n")).toHaveLength(1);
}, 120_000);

it("turns run one at a time in call order, and a failed turn frees the next", async () => {
  const queue = createCheckoutQueue();
  const log: string[] = [];
  let open = () => undefined as void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const first = queue.run(async () => {
    log.push("first started");
    await gate;
    log.push("first ended");
    throw new Error("git failed");
  });
  const second = queue.run(async () => {
    log.push("second started");
    return 2;
  });
  for (let i = 0; i < 10; i++) await Promise.resolve();
  expect(log).toEqual(["first started"]);
  open();
  await expect(first).rejects.toThrow("git failed");
  expect(await second).toBe(2);
  expect(log).toEqual(["first started", "first ended", "second started"]);
});

it("the controller's git source polls in its checkout's queue: a fetch waits while a worktree is in use", async () => {
  const { tmp, origin, author } = await remote();
  const log = createLogger({ level: "silent" });
  const source = await openManifestSource(
    { kind: "git", url: origin, branch: "main", workDir: join(tmp, "checkout"), intervalMs: 60_000 },
    process.env,
    log,
  );
  try {
    await writeFile(join(author, "app.yaml"), "image: 1\n");
    await git(author, "commit", "--quiet", "-am", "manifests 1");
    await git(author, "push", "--quiet", "origin", "HEAD:main");
    let open = () => undefined as void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const on = { repoRoot: source.repoRoot, gitEnv: source.gitEnv, queue: source.gitQueue };
    const drift = onBranchWorktree({ ...on, branch: "drift/prod", prefix: "plumb-queue-test-" }, () => gate);
    let fetched = false;
    const poll = source.fetch!().then((moved) => (fetched = moved));
    // The fetch would take a few git processes; it has not started while the worktree is in use.
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(fetched).toBe(false);
    expect(await git(source.repoRoot, "log", "-1", "--format=%s")).toBe("manifests 0");
    open();
    await Promise.all([drift, poll]);
    expect(fetched).toBe(true);
    expect(await git(source.repoRoot, "log", "-1", "--format=%s")).toBe("manifests 1");
  } finally {
    await source.close();
  }
}, 60_000);

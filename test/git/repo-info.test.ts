import { execFile } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, expect, it } from "vitest";
import { repoInfo } from "../../src/git/status/status-branch.js";

// The status branch's repository (status-branch.ts repoInfo): its top and current branch are asked
// in one git process, `rev-parse --show-toplevel --abbrev-ref HEAD`; a repository without a commit
// has no HEAD to name, and its top is asked alone.

const run = promisify(execFile);
let dir: string;
beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "plumb-repo-info-")));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const commitIn = (repo: string) =>
  run("git", ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "--allow-empty", "-m", "m"], {
    cwd: repo,
  });

it("a checkout: its top and the branch checked out, from a directory under it", async () => {
  const repo = join(dir, "repo");
  await run("git", ["init", "--quiet", "--initial-branch=trunk", repo]);
  await commitIn(repo);
  await mkdir(join(repo, "deploy"));
  const info = await repoInfo({ root: join(repo, "deploy"), branch: "plumb-status" });
  expect(info).toMatchObject({ top: repo, current: "trunk", hasRemote: false, source: repo });
  expect(info.pathOnBranch).toBe("deploy/.plumb/status");
});

it("a repository without a commit: its top, no current branch", async () => {
  const repo = join(dir, "fresh");
  await run("git", ["init", "--quiet", "--initial-branch=trunk", repo]);
  expect(await repoInfo({ root: repo, branch: "plumb-status" })).toMatchObject({ top: repo, current: "" });
});

it("a top whose path holds a line break keeps it", async () => {
  const repo = join(dir, "line\nbreak");
  await run("git", ["init", "--quiet", "--initial-branch=trunk", repo]);
  await commitIn(repo);
  expect(await repoInfo({ root: repo, branch: "plumb-status" })).toMatchObject({
    top: repo,
    current: "trunk",
  });
});

it("outside a repository: status-branch-no-repo", async () => {
  await expect(repoInfo({ root: dir, branch: "plumb-status" })).rejects.toMatchObject({
    code: "status-branch-no-repo",
  });
});

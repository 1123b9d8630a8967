import { spawn } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { chmod, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt } from "../support/built-cli.js";
import { gitIn, planesEnv, prodImage, promotionRepo, stopPromotion } from "../support/promotion-repo.js";
import { plain, startTwoPlanes, type TwoPlanes } from "./two-planes.js";

// plumb promote --branch killed (SIGKILL, its git with it) while it commits: a pre-commit hook
// holds the commit until the test has seen it start, then the built CLI's process group is killed.
// No branch may be left: a branch at HEAD read as a promotion with nothing in it, and the retry
// failed as "branch already exists". The retry then makes the branch with the promotion, and
// removes the temporary worktree the killed run left registered (its pid gone).

let planes: TwoPlanes;
let repo: string;
const BRANCH = "promote/prod-agent";
const MAIN = join(process.cwd(), "dist", "src", "cli", "main.js");

const git = (...args: string[]) => gitIn(repo)(...args);

/** The built CLI in a process group of its own (so it and its git can be killed together). */
function promote() {
  const child = spawn(process.execPath, [MAIN, "promote", repo, "--to", "prod", "--branch", BRANCH], {
    env: { ...process.env, NO_COLOR: "1", ...planesEnv(planes) },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, exited, output: () => out };
}

/** The paths of the repository's worktrees, its own checkout first. */
const worktrees = () =>
  git("worktree", "list", "--porcelain")
    .split("\n")
    .filter((line) => line.startsWith("worktree "))
    .map((line) => line.slice("worktree ".length));
const realRepo = () => realpathSync(repo);

async function until(condition: () => boolean, what: string) {
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

beforeAll(async () => {
  assertBuilt();
  planes = await startTwoPlanes();
  const files = { "agent.yaml": `${plain("agent")}${prodImage("img/agent:0")}` };
  repo = await promotionRepo(planes, files, { prefix: "plumb-promote-killed-", git: true });
});

afterAll(() => stopPromotion(planes, repo));

describe("promote --branch killed while it commits", () => {
  it("leaves no branch, and the retry makes it with the promotion", async () => {
    const hook = join(repo, ".git", "hooks", "pre-commit");
    const started = join(repo, ".git", "commit-started");
    await writeFile(hook, `#!/bin/sh\ntouch "${started}"\nexec sleep 60\n`);
    await chmod(hook, 0o755);
    const run = promote();
    await until(() => existsSync(started) || run.child.exitCode !== null, "the commit to start");
    expect(existsSync(started), run.output()).toBe(true);
    process.kill(-run.child.pid!, "SIGKILL");
    await run.exited;
    expect(git("branch", "--list", BRANCH).trim()).toBe("");
    expect(git("status", "--porcelain", "--", "environments", "agent.yaml").trim()).toBe("");
    // Its temporary worktree is left registered (and its directory there) by the kill ...
    const left = worktrees().filter((path) => path !== realRepo());
    expect(left).toHaveLength(1);
    expect(left[0]).toContain(`plumb-promote-${run.child.pid}-`);

    await rm(hook);
    const retry = promote();
    expect(await retry.exited, retry.output()).toBe(0);
    expect(git("show", `${BRANCH}:agent.yaml`)).toContain('image_uri: "img/agent:1"');
    expect(git("rev-parse", "--abbrev-ref", "HEAD").trim()).toBe("main");
    // ... and removed by the next run, which made and removed its own: only the checkout is left.
    expect(worktrees()).toEqual([realRepo()]);
    expect(existsSync(left[0]!)).toBe(false);
  });
});

import { execFileSync, spawn } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { assertBuilt } from "../support/built-cli.js";
import {
  environmentDoc,
  plain,
  PROD_KEY,
  runCommand,
  STAGING_KEY,
  startTwoPlanes,
  type TwoPlanes,
} from "./two-planes.js";

// plumb promote --branch killed (SIGKILL, its git with it) while it commits: a pre-commit hook
// holds the commit until the test has seen it start, then the built CLI's process group is killed.
// No branch may be left: a branch at HEAD read as a promotion with nothing in it, and the retry
// failed as "branch already exists". The retry then makes the branch with the promotion, and
// removes the temporary worktree the killed run left registered (its pid gone).

let planes: TwoPlanes;
let repo: string;
const BRANCH = "promote/prod-agent";
const MAIN = join(process.cwd(), "dist", "src", "cli", "main.js");

const git = (...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@localhost", ...args], {
    cwd: repo,
    encoding: "utf8",
  });

/** The built CLI in a process group of its own (so it and its git can be killed together). */
function promote() {
  const child = spawn(process.execPath, [MAIN, "promote", repo, "--to", "prod", "--branch", BRANCH], {
    env: {
      ...process.env,
      NO_COLOR: "1",
      STAGING_API_URL: planes.staging.url,
      STAGING_API_KEY: STAGING_KEY,
      PROD_API_URL: planes.prod.url,
      PROD_API_KEY: PROD_KEY,
    },
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
  repo = await mkdtemp(join(tmpdir(), "plumb-promote-killed-"));
  await mkdir(join(repo, "environments"));
  await writeFile(join(repo, "environments", "staging.yaml"), environmentDoc("staging"));
  await writeFile(
    join(repo, "environments", "prod.yaml"),
    environmentDoc("prod", "  promotion: {from: staging, gates: {deployed: false}}\n"),
  );
  const override = `environments:\n  prod:\n    spec:\n      source_revision_config: {image_uri: "img/agent:0"}\n`;
  await writeFile(join(repo, "agent.yaml"), `${plain("agent")}${override}`);
  const applied = await runCommand(applyCommand, [repo, "--env", "staging", "--yes"], planes);
  expect(applied.code, applied.err).toBe(0);
  git("init", "-q", "-b", "main");
  git("add", "environments", "agent.yaml");
  git("commit", "-q", "-m", "init");
});

afterAll(async () => {
  await planes.staging.stop();
  await planes.prod.stop();
  await rm(repo, { recursive: true, force: true });
});

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

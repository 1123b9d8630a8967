import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { runInProcess } from "../support/in-process-cli.js";
import { gitrepoDoc, writeManifests } from "../reconcile/harness.js";

// How many git processes one `plumb apply --status-branch` starts: each costs 2-3 ms of CPU locally
// and a round trip over the network (ls-remote, fetch, push), at every CI run and controller
// renewal. A `git` first on PATH writes each command's arguments to a file; the counts are pinned
// so that a change adding processes shows here (docs/testing.md, "Where the CPU goes").

const run = promisify(execFile);
const git = (cwd: string, ...args: string[]) =>
  run("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd });

let cp: RunningControlPlane;
let tmp: string;
beforeAll(async () => {
  cp = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0, runSeconds: 0 });
  tmp = await mkdtemp(join(tmpdir(), "plumb-git-count-"));
});
afterAll(async () => {
  await cp.stop();
  await rm(tmp, { recursive: true, force: true });
});

/** A `git` that logs its arguments (one line per process) to `log`, then runs the real one. */
async function countingGit(dir: string, log: string): Promise<string> {
  const real = (await run("sh", ["-c", "command -v git"])).stdout.trim();
  const bin = join(dir, "bin");
  await mkdir(bin, { recursive: true });
  const script = `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec '${real}' "$@"\n`;
  await writeFile(join(bin, "git"), script);
  await chmod(join(bin, "git"), 0o755);
  return bin;
}

it("one apply --status-branch starts a pinned number of git processes (first on a new branch, then a change)", async () => {
  const bare = join(tmp, "origin.git");
  await run("git", ["init", "--quiet", "--bare", "--initial-branch=main", bare]);
  const work = join(tmp, "work");
  await run("git", ["clone", "--quiet", bare, work]);
  await git(work, "checkout", "--quiet", "-b", "main");
  const manifests = join(work, "deploy");
  await mkdir(manifests, { recursive: true });
  await writeManifests(manifests, [gitrepoDoc("counted", { secrets: [{ name: "S", value: "v1" }] })]);
  await git(work, "add", ".");
  await git(work, "commit", "--quiet", "-m", "m");
  await git(work, "push", "--quiet", "origin", "main");

  const log = join(tmp, "git.log");
  const bin = await countingGit(tmp, log);
  const apply = async () => {
    await writeFile(log, "");
    const { code, output } = await runInProcess(
      ["apply", manifests, "--yes", "--status-branch", "plumb-status"],
      {
        PLUMB_API_URL: cp.url,
        PLUMB_API_KEY: DEFAULT_API_KEY,
        PATH: `${bin}${delimiter}${process.env.PATH ?? ""}`,
      },
    );
    expect(code, output).toBe(0);
    expect(output).toContain("Status committed to branch plumb-status");
    return (await readFile(log, "utf8")).split("\n").filter(Boolean);
  };

  const first = await apply();
  await writeManifests(manifests, [gitrepoDoc("counted", { secrets: [{ name: "S", value: "v2" }] })]);
  const second = await apply();
  // First, on a new branch (29): the repository read for the lease, the branch's read and the
  // publish (3 each: rev-parse, remote -v, its credential config); the lease taken (a scratch
  // repository, a fetch that finds none, commit-tree, push); the branch's fetch that finds none;
  // the manifests' commit and tracked records (3); the clone that finds no branch and the orphan
  // made instead (4); the records committed (5); the status pushed with the lease (2); the release.
  // Then, with the branch there (31): its records read (three ls-tree, a cat-file).
  expect({ first: first.length, second: second.length }, [...first, "--", ...second].join("\n")).toEqual({
    first: 29,
    second: 31,
  });
});

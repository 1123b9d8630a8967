import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, expect, it } from "vitest";
import { readPruneLedger, recordPruneDeletion } from "../../src/status/prune-ledger.js";
import { loadStatus, publishStatus } from "../../src/git/status/status-source.js";

// The prune ledger travels on the status branch: a fresh clone (the next CI run, a new controller
// pod) counts the deletions of earlier runs, and its own publish carries the union.

const run = promisify(execFile);
const git = async (cwd: string, ...args: string[]) =>
  (await run("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd })).stdout.trim();

let base: string;
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

async function cloneOf(bare: string, name: string) {
  const dir = join(base, name);
  await run("git", ["clone", "--quiet", bare, dir]);
  return dir;
}

const entry = (name: string, at: string) => ({ at, kind: "Deployment", name, id: `id-${name}` });

it("a fresh clone reads the branch's ledger, and publishes the union", async () => {
  base = await mkdtemp(join(tmpdir(), "plumb-ledger-branch-"));
  const bare = join(base, "origin.git");
  await run("git", ["init", "--quiet", "--bare", "--initial-branch=main", bare]);
  const first = await cloneOf(bare, "first");
  await writeFile(join(first, "app.yaml"), "apiVersion: plumb/v1\n");
  await writeFile(join(first, ".gitignore"), ".plumb/\n");
  await git(first, "checkout", "--quiet", "-b", "main");
  await git(first, "add", ".");
  await git(first, "commit", "--quiet", "-m", "manifests");
  await git(first, "push", "--quiet", "origin", "main");

  const location = (root: string) => ({ root, statusBranch: "plumb-status" });
  await recordPruneDeletion(join(first, ".plumb/status"), entry("beta", "2026-01-01T10:00:00.000Z"));
  await publishStatus(location(first), "run 1");

  const second = await cloneOf(bare, "second");
  await loadStatus(location(second));
  expect((await readPruneLedger(join(second, ".plumb/status"))).map((e) => e.name)).toEqual(["beta"]);
  await recordPruneDeletion(join(second, ".plumb/status"), entry("gamma", "2026-01-01T10:05:00.000Z"));
  await publishStatus(location(second), "run 2");

  const third = await cloneOf(bare, "third");
  await loadStatus(location(third));
  await loadStatus(location(third)); // read twice: nothing is counted twice
  expect((await readPruneLedger(join(third, ".plumb/status"))).map((e) => e.name)).toEqual(["beta", "gamma"]);
});

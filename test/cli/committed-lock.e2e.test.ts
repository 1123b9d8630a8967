import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { acquireStateLock } from "../../src/lock/index.js";
import { assertBuilt, runCli } from "../support/built-cli.js";
import { plain } from "./two-planes.js";

// A state lock committed with the manifests (`.plumb/` added while a plumb held it) is a copy, not
// a lock: in a fresh clone it named a process of the machine that committed it, so unlock and
// status said the store was held, and apply was refused (or waited a lease no one renews). Like
// git-tracked status records (5005d06), a lock whose files git all tracks is not trusted, and said.
// The built CLI in a fresh clone; a lock taken there after the clone is still a holder's.

let cp: RunningControlPlane;
let root: string;
beforeAll(async () => {
  assertBuilt();
  cp = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
  root = await mkdtemp(join(tmpdir(), "plumb-committed-lock-"));
});
afterAll(async () => {
  await cp?.stop();
  await rm(root, { recursive: true, force: true });
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@localhost", ...args], { cwd }).toString();
const plumb = (...args: string[]) =>
  runCli(args, { PLUMB_API_URL: cp.url, PLUMB_API_KEY: DEFAULT_API_KEY, PLUMB_LOG_LEVEL: "warn" });
const storeOf = (dir: string) => join(dir, ".plumb", "status");

it("a lock committed to git is not a holder in a fresh clone: said, and not trusted", async () => {
  const repo = join(root, "repo");
  git(root, "init", "-q", repo);
  await writeFile(join(repo, "alpha.yaml"), plain("alpha"));
  const held = await acquireStateLock(
    { statusDir: storeOf(repo) },
    { command: "plumb apply", leaseMs: 60_000 },
  );
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "manifests, and by mistake .plumb/ while an apply held its lock");
  await held.release();
  const clone = join(root, "clone");
  git(root, "clone", "-q", repo, clone);
  expect(git(clone, "ls-files", ".plumb")).toMatch(/^\.plumb\/status\.lock\/holder\.json$/m);

  const unlock = await plumb("unlock", clone);
  expect(unlock.output).toContain(`The status store ${storeOf(clone)} is not locked (the state lock`);
  expect(unlock.output).toContain("is tracked by git");
  expect(unlock.code).toBe(0);

  const apply = await plumb("apply", clone, "--yes", "--no-wait");
  expect(apply.output).toContain("is tracked by git");
  expect(apply.code, apply.output).toBe(0);
  expect(apply.output).not.toContain("state-locked");
  expect(existsSync(`${storeOf(clone)}.lock`)).toBe(false); // taken, then released
  const names = (await (
    await fetch(`${cp.url}/v2/deployments`, { headers: { "x-api-key": DEFAULT_API_KEY } })
  ).json()) as {
    resources: Array<{ name: string }>;
  };
  expect(names.resources.map((d) => d.name)).toEqual(["alpha"]);

  // A lock taken in the clone now is a holder's (its renewal file is its own, untracked).
  const live = await acquireStateLock({ statusDir: storeOf(clone) }, { command: "plumb apply (live)" });
  try {
    const refused = await plumb("unlock", clone);
    expect(refused.output).toContain("is held by plumb apply (live)");
    expect(refused.code).toBe(1);
  } finally {
    await live.release();
  }
});

it("status in a fresh clone writes its records past a committed lock, and says so", async () => {
  const repo = join(root, "repo-status");
  git(root, "init", "-q", repo);
  await writeFile(join(repo, "beta.yaml"), plain("beta"));
  const held = await acquireStateLock(
    { statusDir: storeOf(repo) },
    { command: "plumb apply", leaseMs: 60_000 },
  );
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "with .plumb/");
  await held.release();
  const clone = join(root, "clone-status");
  git(root, "clone", "-q", repo, clone);
  const status = await plumb("status", clone);
  expect(status.output).toContain("is tracked by git");
  expect(status.output).not.toContain("reports only");
});

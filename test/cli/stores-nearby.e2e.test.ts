import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { driftCommand } from "../../src/cli/sync/drift.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { api } from "../controller/support.js";
import {
  environmentDoc,
  plain,
  PROD_KEY,
  runCommand,
  STAGING_KEY,
  startTwoPlanes,
  withSecrets,
} from "./two-planes.js";

// A PATH inside a tree reads what the stores above it recorded, and a directory PATH what the
// stores below it recorded (docs/status.md "Stores above and below"): after an apply of the whole
// tree, an apply of a sub-directory or of one file sends no secret again (no new revision), and
// after an apply of a sub-directory, an apply of the tree; a secret changed in git is still sent,
// and prune never sees the records above or below. Counted on the real control plane.

let staging: RunningControlPlane;
let prod: RunningControlPlane;
const repos: string[] = [];

const PROD_OVERRIDE = `environments:
  prod:
    spec:
      source_revision_config: {image_uri: "img/prod:1"}
`;

/** A git repository: sub/a.yaml (two secrets), sub/b.yaml (none), other/c.yaml (two secrets). */
async function makeRepo(overrides = ""): Promise<string> {
  const repo = await mkdtemp(join(tmpdir(), "plumb-stores-above-"));
  repos.push(repo);
  execFileSync("git", ["init", "-q", repo]);
  await mkdir(join(repo, "sub"));
  await mkdir(join(repo, "other"));
  await writeFile(join(repo, "sub", "a.yaml"), withSecrets("a", "fast", overrides));
  await writeFile(join(repo, "sub", "b.yaml"), plain("b"));
  await writeFile(join(repo, "other", "c.yaml"), withSecrets("c", "slow", overrides));
  return repo;
}

beforeAll(async () => {
  ({ staging, prod } = await startTwoPlanes());
});
afterAll(async () => {
  await staging?.stop();
  await prod?.stop();
  for (const repo of repos) await rm(repo, { recursive: true, force: true });
});

/** Without environments: PLUMB_API_URL names the staging plane. */
const SINGLE = { PLUMB_API_KEY: STAGING_KEY, AGENT_TOKEN: "token-1" };

type Build = typeof planCommand | typeof applyCommand | typeof driftCommand;

const run = (command: Build, args: string[]) =>
  runCommand(command, args, { staging, prod }, { ...SINGLE, PLUMB_API_URL: staging.url });

const runEnv = (command: Build, args: string[]) =>
  runCommand(command, args, { staging, prod }, { AGENT_TOKEN: "token-1" });

/** Every revision of every deployment on `plane`, and the deployments' names. */
async function counted(plane: RunningControlPlane, key: string) {
  const client = api(plane.url, key);
  const deployments = await client.deployments();
  let revisions = 0;
  for (const d of deployments) revisions += (await client.revisions(d.id)).length;
  return { revisions, names: deployments.map((d) => d.name).sort() };
}

const UNKNOWN = "no recorded fingerprints";

describe("a PATH inside a tree, without environments", () => {
  let repo: string;
  beforeAll(async () => {
    repo = await makeRepo();
  });

  it("applies the sub-directory and one file after the tree without sending a secret again", async () => {
    const tree = await run(applyCommand, [repo, "--yes"]);
    expect(tree.code).toBe(0);
    const after = await counted(staging, STAGING_KEY);
    expect(after.names).toEqual(["a", "b", "c"]);

    const plan = await run(planCommand, [join(repo, "sub"), "--output", "json"]);
    expect(plan.err).not.toContain(UNKNOWN);
    const changes = (JSON.parse(plan.out) as { changes: Array<{ name: string; action: string }> }).changes;
    expect(changes.map((c) => [c.name, c.action])).toEqual([
      ["a", "noop"],
      ["b", "noop"],
    ]);

    // drift compares the secrets the same way: nothing pending, nothing drifted.
    const drift = await run(driftCommand, [join(repo, "sub"), "--fail-on-pending"]);
    expect(drift.code).toBe(0);
    expect(drift.out).not.toContain("removed from git"); // c, recorded above from other/, is not judged

    const sub = await run(applyCommand, [join(repo, "sub"), "--yes"]);
    expect(sub.code).toBe(0);
    expect(sub.err).not.toContain(UNKNOWN);
    expect((await counted(staging, STAGING_KEY)).revisions).toBe(after.revisions);
    // The sub-directory's own store now holds the fingerprints (carried forward, nothing sent).
    const own = JSON.parse(
      await readFile(join(repo, "sub", ".plumb", "status", "deployment.a.json"), "utf8"),
    );
    expect(own.secret_fingerprints).toBeTruthy();
    expect(own.manifest_file).toBe("a.yaml");

    const file = await run(applyCommand, [join(repo, "other", "c.yaml"), "--yes"]);
    expect(file.code).toBe(0);
    expect(file.err).not.toContain(UNKNOWN);
    expect((await counted(staging, STAGING_KEY)).revisions).toBe(after.revisions);
  });

  it("apply SUBDIR --prune deletes nothing the tree's store recorded from elsewhere", async () => {
    const before = await counted(staging, STAGING_KEY);
    const pruned = await run(applyCommand, [join(repo, "sub"), "--prune", "--yes"]);
    expect(pruned.code).toBe(0);
    expect(pruned.out).not.toContain("removed from git");
    expect(await counted(staging, STAGING_KEY)).toEqual(before);
  });

  it("sends a secret changed in git since the tree's apply: the fingerprint above is checked", async () => {
    const before = await counted(staging, STAGING_KEY);
    await writeFile(join(repo, "other", "c.yaml"), withSecrets("c", "slower"));
    await rm(join(repo, "other", ".plumb"), { recursive: true, force: true }); // only the tree's record
    const other = await run(applyCommand, [join(repo, "other"), "--yes"]);
    expect(other.code).toBe(0);
    expect((await counted(staging, STAGING_KEY)).revisions).toBe(before.revisions + 1);
  });

  it("with --status-dir, reads that store only: the secrets above are unknown", async () => {
    const empty = join(repo, "elsewhere-status");
    const plan = await run(planCommand, [join(repo, "sub"), "--status-dir", empty, "--output", "json"]);
    expect(plan.err).toContain(UNKNOWN);
    const changes = (JSON.parse(plan.out) as { changes: Array<{ name: string; action: string }> }).changes;
    expect(changes.find((c) => c.name === "a")?.action).toBe("update");
  });
});

describe("a PATH inside a tree, with environments", () => {
  it("applies the sub-directory and one file in staging after the tree without a new revision", async () => {
    const repo = await makeRepo(PROD_OVERRIDE);
    await mkdir(join(repo, "environments"));
    await writeFile(join(repo, "environments", "staging.yaml"), environmentDoc("staging"));
    await writeFile(join(repo, "environments", "prod.yaml"), environmentDoc("prod"));
    const before = await counted(staging, STAGING_KEY);
    const tree = await runEnv(applyCommand, [repo, "--env", "staging", "--yes"]);
    expect(tree.code).toBe(0);
    const after = await counted(staging, STAGING_KEY);
    expect(after.revisions).toBeGreaterThan(before.revisions);

    const sub = await runEnv(applyCommand, [join(repo, "sub"), "--env", "staging", "--yes"]);
    expect(sub.code).toBe(0);
    expect(sub.err).not.toContain(UNKNOWN);
    expect((await counted(staging, STAGING_KEY)).revisions).toBe(after.revisions);
    const own = join(repo, "sub", ".plumb", "status", "staging", "deployment.a.json");
    expect(JSON.parse(await readFile(own, "utf8")).secret_fingerprints).toBeTruthy();

    const file = await runEnv(applyCommand, [join(repo, "other", "c.yaml"), "--env", "staging", "--yes"]);
    expect(file.code).toBe(0);
    expect(file.err).not.toContain(UNKNOWN);
    expect((await counted(staging, STAGING_KEY)).revisions).toBe(after.revisions);
    expect((await counted(prod, PROD_KEY)).names).toEqual([]);
  });
});

describe("a PATH inside a tree, with --status-branch", () => {
  const git = (cwd: string, ...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd });

  /** makeRepo, committed with .plumb/ ignored and pushed to a bare origin; [repo, base]. */
  async function pushedRepo(): Promise<[string, string]> {
    const base = await mkdtemp(join(tmpdir(), "plumb-stores-nearby-branch-"));
    repos.push(base);
    const bare = join(base, "origin.git");
    execFileSync("git", ["init", "-q", "--bare", "--initial-branch=main", bare]);
    const repo = await makeRepo();
    await writeFile(join(repo, ".gitignore"), ".plumb/\n");
    git(repo, "checkout", "-q", "-b", "main");
    git(repo, "add", ".");
    git(repo, "commit", "-q", "-m", "manifests");
    git(repo, "remote", "add", "origin", bare);
    git(repo, "push", "-q", "origin", "main");
    return [repo, base];
  }

  it("reads the stores below on the branch: a fresh clone applies the tree after a sub-directory without a new revision", async () => {
    const [repo, base] = await pushedRepo();
    expect((await run(applyCommand, [repo, "--status-branch", "plumb-status", "--yes"])).code).toBe(0);
    const tree = await counted(staging, STAGING_KEY);
    await changeSubSecret(repo, "branched");
    git(repo, "commit", "-q", "-am", "a secret changed");
    git(repo, "push", "-q", "origin", "main");
    expect(
      (await run(applyCommand, [join(repo, "sub"), "--status-branch", "plumb-status", "--yes"])).code,
    ).toBe(0);
    expect((await counted(staging, STAGING_KEY)).revisions).toBe(tree.revisions + 1);

    const fresh = join(base, "fresh");
    execFileSync("git", ["clone", "-q", join(base, "origin.git"), fresh]);
    const again = await run(applyCommand, [fresh, "--status-branch", "plumb-status", "--yes"]);
    expect(again.code).toBe(0);
    expect((await counted(staging, STAGING_KEY)).revisions).toBe(tree.revisions + 1);
  });

  it("reads the stores above on the branch: a fresh clone applies a sub-directory without a new revision", async () => {
    const [repo, base] = await pushedRepo();
    const bare = join(base, "origin.git");
    const tree = await run(applyCommand, [repo, "--status-branch", "plumb-status", "--yes"]);
    expect(tree.code).toBe(0);
    const after = await counted(staging, STAGING_KEY);

    const fresh = join(base, "fresh");
    execFileSync("git", ["clone", "-q", bare, fresh]);
    const sub = await run(applyCommand, [join(fresh, "sub"), "--status-branch", "plumb-status", "--yes"]);
    expect(sub.code).toBe(0);
    expect(sub.err).not.toContain(UNKNOWN);
    expect((await counted(staging, STAGING_KEY)).revisions).toBe(after.revisions);
  });
});

/** sub/a.yaml with its literal secret MODE changed in git. */
const changeSubSecret = (repo: string, literal: string, overrides = "") =>
  writeFile(join(repo, "sub", "a.yaml"), withSecrets("a", literal, overrides));

describe("a tree after an apply of its sub-directory (the stores below)", () => {
  it("sends a secret changed in git once: the sub-directory's apply, not the tree's after it", async () => {
    const repo = await makeRepo();
    expect((await run(applyCommand, [repo, "--yes"])).code).toBe(0);
    const tree = await counted(staging, STAGING_KEY);
    await changeSubSecret(repo, "faster");
    expect((await run(applyCommand, [join(repo, "sub"), "--yes"])).code).toBe(0);
    expect((await counted(staging, STAGING_KEY)).revisions).toBe(tree.revisions + 1);

    const again = await run(applyCommand, [repo, "--yes"]);
    expect(again.code).toBe(0);
    expect((await counted(staging, STAGING_KEY)).revisions).toBe(tree.revisions + 1);
    // The tree's own store now holds the new fingerprint (carried forward, nothing sent).
    const own = JSON.parse(await readFile(join(repo, ".plumb", "status", "deployment.a.json"), "utf8"));
    expect(own.manifest_file).toBe("sub/a.yaml");
    const below = JSON.parse(
      await readFile(join(repo, "sub", ".plumb", "status", "deployment.a.json"), "utf8"),
    );
    expect(own.secret_fingerprints).toEqual(below.secret_fingerprints);
  });

  it("applies the tree after its sub-directory alone without a new revision, and --prune deletes nothing", async () => {
    const repo = await makeRepo();
    await changeSubSecret(repo, "first");
    await writeFile(join(repo, "sub", "z.yaml"), plain("z"));
    expect((await run(applyCommand, [join(repo, "sub"), "--yes"])).code).toBe(0);
    const sub = await counted(staging, STAGING_KEY);
    // z leaves git: sub/'s store recorded it, the tree's never did; only `apply sub --prune` deletes it.
    await rm(join(repo, "sub", "z.yaml"));

    const plan = await run(planCommand, [repo, "--output", "json"]);
    const changes = (JSON.parse(plan.out) as { changes: Array<{ name: string; action: string }> }).changes;
    expect(changes.filter((c) => c.name !== "c").map((c) => [c.name, c.action])).toEqual([
      ["a", "noop"],
      ["b", "noop"],
    ]);
    const drift = await run(driftCommand, [repo]);
    expect(drift.out).not.toContain("removed from git");

    // --prune: the sub-directory's records (files relative to sub/) are never the tree's to judge.
    const pruned = await run(applyCommand, [repo, "--prune", "--yes"]);
    expect(pruned.code).toBe(0);
    expect(pruned.out).not.toContain("removed from git");
    const after = await counted(staging, STAGING_KEY);
    expect(after.names).toEqual(["a", "b", "c", "z"]);
    // Only other/c.yaml, recorded in no store, is sent: one revision for it, none for a.
    expect(after.revisions).toBe(sub.revisions + 1);
  });

  it("with environments: the tree in staging after its sub-directory sends nothing again", async () => {
    const repo = await makeRepo(PROD_OVERRIDE);
    await mkdir(join(repo, "environments"));
    await writeFile(join(repo, "environments", "staging.yaml"), environmentDoc("staging"));
    await writeFile(join(repo, "environments", "prod.yaml"), environmentDoc("prod"));
    expect((await runEnv(applyCommand, [repo, "--env", "staging", "--yes"])).code).toBe(0);
    await changeSubSecret(repo, "quick", PROD_OVERRIDE);
    expect((await runEnv(applyCommand, [join(repo, "sub"), "--env", "staging", "--yes"])).code).toBe(0);
    const sub = await counted(staging, STAGING_KEY);
    expect((await runEnv(applyCommand, [repo, "--env", "staging", "--yes"])).code).toBe(0);
    expect((await counted(staging, STAGING_KEY)).revisions).toBe(sub.revisions);
  });
});

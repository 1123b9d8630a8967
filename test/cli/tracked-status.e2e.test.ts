import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { driftCommand } from "../../src/cli/sync/drift.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { statusCommand } from "../../src/cli/sync/status.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { api } from "../controller/support.js";
import { plain, runCommand, STAGING_KEY, startTwoPlanes, withSecrets } from "./two-planes.js";

// The status store is state, never manifests: a record committed to the repository is not one
// plumb wrote. Anyone whose commit lands can name any live deployment in such a file, and apply
// --prune in a fresh clone (or a controller following the branch) deleted it as one plumb had
// created. A record git tracks is ignored and said (docs/status.md "Where the records live").
// Counted on the real control plane: the deployment named only by the committed record stays.

let planes: Awaited<ReturnType<typeof startTwoPlanes>>;
let staging: RunningControlPlane;
const dirs: string[] = [];

beforeAll(async () => {
  planes = await startTwoPlanes();
  staging = planes.staging;
});
afterAll(async () => {
  await planes?.staging.stop();
  await planes?.prod.stop();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@localhost", ...args], { cwd });

const onStaging = () => ({ PLUMB_API_URL: staging.url, PLUMB_API_KEY: STAGING_KEY, AGENT_TOKEN: "t-1" });
const apply = (path: string, ...flags: string[]) =>
  runCommand(applyCommand, [path, "--yes", "--no-wait", ...flags], planes, onStaging());

it("a committed record naming a deployment plumb never made is not pruned from a fresh clone", async () => {
  const client = api(staging.url, STAGING_KEY);
  const repo = await mkdtemp(join(tmpdir(), "plumb-tracked-status-"));
  dirs.push(repo);
  git(repo, "init", "-q");
  await writeFile(join(repo, "alpha.yaml"), plain("alpha"));
  expect((await apply(repo)).code).toBe(0);

  // Made by hand on the control plane, never by plumb: no manifest, no record.
  const victim = await client.call<{ id: string }>("POST", "/v2/deployments", {
    name: "victim",
    source: "internal_container",
    source_config: {},
    source_revision_config: { image_uri: "img/victim:1" },
    secrets: [],
  });
  // A commit adds a record for it, shaped like plumb's own (alpha's, renamed).
  const store = join(repo, ".plumb", "status");
  const alpha = JSON.parse(await readFile(join(store, "deployment.alpha.json"), "utf8")) as object;
  const forged = { ...alpha, name: "victim", id: victim.id, manifest_file: "victim.yaml" };
  await writeFile(join(store, "deployment.victim.json"), JSON.stringify(forged));
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "manifests (and, by mistake or on purpose, .plumb/)");

  const clone = join(repo, "..", `${repo.split("/").pop()}-clone`);
  dirs.push(clone);
  git(tmpdir(), "clone", "-q", repo, clone);
  await writeFile(join(clone, "beta.yaml"), plain("beta")); // something to apply, and so to publish
  const pruned = await apply(clone, "--prune", "--status-branch", "plumb-status");

  expect((await client.deployments()).map((d) => d.name).sort()).toEqual(["alpha", "beta", "victim"]);
  expect(pruned.err).toContain("deployment.victim.json");
  expect(pruned.err).toContain("tracked by git");
  expect(pruned.code, pruned.err).toBe(0);
  // Nor is it published: the status branch, trusted by later runs, never receives it.
  const published = git(repo, "ls-tree", "-r", "--name-only", "plumb-status").toString();
  expect(published).toContain(".plumb/status/deployment.beta.json");
  expect(published).not.toContain("victim");
});

// An apply's record is written over whatever file is at its path; when that file held a later
// apply than the writer knew of (a slow writer), its applied fields (fingerprints, digest, applied
// spec) were kept in the record written, and a committed file was taken as such a record: its
// forged fields reached the disk copy, trusted once the store is untracked (the fix the warning
// gives). Only the store's own record is merged from now (saveOwnObjectStatus, git asked then).
it("an apply over a committed record at its record's path keeps none of the commit's fields", async () => {
  const repo = await mkdtemp(join(tmpdir(), "plumb-tracked-merge-"));
  dirs.push(repo);
  git(repo, "init", "-q");
  await writeFile(join(repo, "alpha.yaml"), withSecrets("alpha", "fast"));
  expect((await apply(repo)).code).toBe(0);
  const file = join(repo, ".plumb", "status", "deployment.alpha.json");
  type Record = { secret_fingerprints: { values: { [name: string]: string } }; applied_at: string };
  const own = JSON.parse(await readFile(file, "utf8")) as Record;
  // A commit puts a record there from a later apply than any, its secrets' fingerprints swapped.
  const values = own.secret_fingerprints.values;
  const forged = {
    ...own,
    applied_at: "2099-01-01T00:00:00.000Z",
    secret_fingerprints: {
      ...own.secret_fingerprints,
      values: { API_TOKEN: values.MODE, MODE: values.API_TOKEN },
    },
  };
  await writeFile(file, JSON.stringify(forged));
  git(repo, "add", "-f", file);
  git(repo, "commit", "-qm", "manifests (and .plumb/status/deployment.alpha.json)");

  await writeFile(
    join(repo, "alpha.yaml"),
    withSecrets("alpha", "fast").replace("img/alpha:1", "img/alpha:2"),
  );
  const applied = await apply(repo);
  expect(applied.code, applied.err).toBe(0);
  expect(applied.err).toContain("tracked by git");
  const written = JSON.parse(await readFile(file, "utf8")) as Record;
  expect(written.applied_at).not.toBe("2099-01-01T00:00:00.000Z");
  expect(written.secret_fingerprints).not.toEqual(forged.secret_fingerprints); // this apply's own

  // Untracked as the warning says: the record on disk is the apply's, so the plan finds nothing to send.
  git(repo, "rm", "-rq", "--cached", ".plumb");
  const plan = await runCommand(planCommand, [repo, "--detailed-exitcode"], planes, onStaging());
  expect(plan.out).toContain("No changes");
  expect(plan.code).toBe(0);
});

// A record's sequence number continued from whatever file was at its path, a commit's too, and a
// refresh (status, drift) was dropped when that file said a higher one: a committed file saying
// 9007199254740991 kept every refresh from being written, and an apply over it wrote 2^53, past which
// the count stops counting. A file git tracks gives no number now, and no file one past the safe ones.
it("a committed file with a huge sequence number at a record's path blocks no refresh and no apply", async () => {
  const client = api(staging.url, STAGING_KEY);
  const repo = await mkdtemp(join(tmpdir(), "plumb-tracked-seq-"));
  dirs.push(repo);
  git(repo, "init", "-q");
  const branch = ["--status-branch", "plumb-status"]; // where the record lives while git tracks the file
  await writeFile(join(repo, "alpha.yaml"), withSecrets("alpha", "fast"));
  expect((await apply(repo, ...branch)).code).toBe(0);
  const file = join(repo, ".plumb", "status", "deployment.alpha.json");
  type Record = { id: string; seq: number; manifest_digest: string };
  const own = JSON.parse(await readFile(file, "utf8")) as Record;
  const id = (await client.deployment("alpha")).id;
  const revisions = (await client.revisions(id)).length;
  await writeFile(file, JSON.stringify({ ...own, seq: Number.MAX_SAFE_INTEGER }));
  git(repo, "add", "-f", file);
  git(repo, "commit", "-qm", "manifests (and .plumb/status/deployment.alpha.json)");
  const written = async () => JSON.parse(await readFile(file, "utf8")) as Record;

  for (const command of [statusCommand, driftCommand]) {
    git(repo, "checkout", "-q", "--", file); // the commit's file again
    const refreshed = await runCommand(command, [repo, ...branch], planes, onStaging());
    expect(refreshed.code, refreshed.err).toBe(0);
    expect(refreshed.err).toContain("tracked by git");
    // The branch's record refreshed and written, numbered after it (the commit's number ignored).
    expect(await written()).toMatchObject({ id, seq: own.seq + 1 });
  }

  git(repo, "checkout", "-q", "--", file);
  await writeFile(
    join(repo, "alpha.yaml"),
    withSecrets("alpha", "fast").replace("img/alpha:1", "img/alpha:2"),
  );
  const applied = await apply(repo, ...branch);
  expect(applied.code, applied.err).toBe(0);
  const record = await written();
  expect(record.manifest_digest).not.toBe(own.manifest_digest);
  expect(record.seq).toBeLessThan(100); // was 2^53: the commit's number continued
  expect((await client.revisions(id)).length).toBe(revisions + 1); // the image's, nothing more

  // Untracked as the warning says: the record on disk is the apply's, so the plan finds nothing to send.
  git(repo, "rm", "-rq", "--cached", ".plumb");
  const plan = await runCommand(planCommand, [repo, "--detailed-exitcode"], planes, onStaging());
  expect(plan.out).toContain("No changes");
  expect(plan.code).toBe(0);
  expect((await client.revisions(id)).length).toBe(revisions + 1);
});

// A refresh removes the record of an object gone from git and from the control plane. Its removal
// compared the number of whatever file was at the record's path and deleted it: a commit's file
// there (git tracks it; the record came from the status branch) was deleted from the working tree
// when its seq was low or it was no record at all, and blocked the removal when high. A file git
// tracks is neither now. (A blocked removal shows nowhere a user looks: nothing reads its answer
// and a publish never mirrors a file git tracks. test/status/status-store-edges.test.ts checks it.)
it("the removal of a gone deployment's record leaves a committed file at its path as it was", async () => {
  const client = api(staging.url, STAGING_KEY);
  const repo = await mkdtemp(join(tmpdir(), "plumb-tracked-remove-"));
  dirs.push(repo);
  git(repo, "init", "-q");
  const branch = ["--status-branch", "plumb-status"]; // where alpha's record lives while git tracks the file
  await writeFile(join(repo, "alpha.yaml"), plain("alpha"));
  await writeFile(join(repo, "beta.yaml"), plain("beta"));
  expect((await apply(repo, ...branch)).code).toBe(0);
  const path = ".plumb/status/deployment.alpha.json";
  const own = JSON.parse(await readFile(join(repo, path), "utf8")) as { id: string; seq: number };
  const onBranch = () => git(repo, "ls-tree", "-r", "--name-only", "plumb-status").toString();
  expect(onBranch()).toContain(path);

  // alpha leaves git (a commit that also puts a file at its record's path) and the control plane.
  const commit = async (text: string) => {
    await writeFile(join(repo, path), text);
    git(repo, "add", "-f", path);
    git(repo, "commit", "-qm", "a file at alpha's record path");
  };
  await rm(join(repo, "alpha.yaml"));
  await commit(JSON.stringify({ ...own, seq: 0 }));
  await client.call("DELETE", `/v2/deployments/${own.id}`);
  const unchanged = () => git(repo, "status", "--porcelain", "--", path).toString();
  const ignoredOnce = (err: string) => err.split(`${path.split("/").pop()}: tracked by git`).length - 1;

  const status = await runCommand(statusCommand, [repo, ...branch], planes, onStaging());
  expect(status.code, status.err).toBe(0);
  expect(unchanged()).toBe(""); // was " D": the commit's file deleted from the working tree
  expect(ignoredOnce(status.err)).toBe(1);
  expect(status.out).toContain("beta");
  expect(status.out).not.toContain("alpha");

  await commit("notes, not a status record\n");
  const drift = await runCommand(driftCommand, [repo, ...branch], planes, onStaging());
  expect(drift.code, drift.err).toBe(0);
  expect(unchanged()).toBe(""); // was " D": deleted, as no record
  expect(ignoredOnce(drift.err)).toBe(1);
  expect(drift.out).not.toContain("alpha");
  // drift publishes: the branch no longer holds alpha's record, beta's stays.
  expect(onBranch()).not.toContain(path);
  expect(onBranch()).toContain(".plumb/status/deployment.beta.json");
});

// apply --prune deletes a deployment whose manifest left git, recorded as plumb's (here on the status
// branch), then removes its record: that removal deleted whatever file was at the record's path, a
// file git tracks too. The deployment is pruned; the commit's file stays as it was.
it("apply --prune removes a pruned deployment's record, never a committed file at its path", async () => {
  const client = api(staging.url, STAGING_KEY);
  const repo = await mkdtemp(join(tmpdir(), "plumb-tracked-prune-"));
  dirs.push(repo);
  git(repo, "init", "-q");
  const branch = ["--status-branch", "plumb-status"];
  await writeFile(join(repo, "gamma.yaml"), plain("gamma"));
  await writeFile(join(repo, "delta.yaml"), plain("delta"));
  expect((await apply(repo, ...branch)).code).toBe(0);
  const path = ".plumb/status/deployment.gamma.json";
  const own = JSON.parse(await readFile(join(repo, path), "utf8")) as object;
  await rm(join(repo, "gamma.yaml"));
  await writeFile(join(repo, path), JSON.stringify({ ...own, seq: 0 }));
  git(repo, "add", "-f", path);
  git(repo, "commit", "-qm", "gamma leaves git; a file at its record's path");

  const pruned = await apply(repo, "--prune", ...branch);
  expect(pruned.code, pruned.err).toBe(0);
  const names = (await client.deployments()).map((d) => d.name);
  expect(names).toContain("delta");
  expect(names).not.toContain("gamma");
  expect(git(repo, "status", "--porcelain", "--", path).toString()).toBe(""); // was " D"
  const published = git(repo, "ls-tree", "-r", "--name-only", "plumb-status").toString();
  expect(published).not.toContain("deployment.gamma.json");
});

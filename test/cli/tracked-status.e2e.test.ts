import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { api } from "../controller/support.js";
import { plain, runCommand, STAGING_KEY, startTwoPlanes } from "./two-planes.js";

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

const apply = (path: string, ...flags: string[]) =>
  runCommand(applyCommand, [path, "--yes", "--no-wait", ...flags], planes, {
    PLUMB_API_URL: staging.url,
    PLUMB_API_KEY: STAGING_KEY,
  });

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

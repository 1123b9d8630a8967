import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { runInProcess } from "../support/in-process-cli.js";
import { containerManifest } from "../support/manifest-text.js";

// A one-file `apply --prune` judges only the objects recorded in that file. An object that left
// the file for another file of the same directory (a split, a merge) is still in git: the CLI
// deleted it (`apply d/a.yaml --prune` after a2 moved from a.yaml to b.yaml), and the next `apply d`
// created it again under a new id. Counted on the control plane: the deployments listed, by id.

let plane: RunningControlPlane;
let repo: string;
const env = () => ({ PLUMB_API_URL: plane.url, PLUMB_API_KEY: DEFAULT_API_KEY });
// In this process (a child process added only its start-up: 10.4 s for the file in CI, three-quarters of it).
const plumb = (...args: string[]) => runInProcess(args, env());

const doc = containerManifest;

async function live(): Promise<Map<string, string>> {
  const res = await fetch(`${plane.url}/v2/deployments?limit=100`, {
    headers: { "x-api-key": DEFAULT_API_KEY },
  });
  const { resources } = (await res.json()) as { resources: Array<{ name: string; id: string }> };
  return new Map(resources.map((d) => [d.name, d.id]));
}

beforeAll(async () => {
  plane = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
});
afterAll(async () => {
  await plane?.stop();
  if (repo) await rm(repo, { recursive: true, force: true });
});
beforeEach(async () => {
  if (repo) await rm(repo, { recursive: true, force: true });
  repo = await mkdtemp(join(tmpdir(), "plumb-prune-moved-"));
  execFileSync("git", ["init", "-q", repo]);
  await mkdir(join(repo, "d"));
  for (const id of (await live()).values()) {
    await fetch(`${plane.url}/v2/deployments/${id}`, {
      method: "DELETE",
      headers: { "x-api-key": DEFAULT_API_KEY },
    });
  }
  await writeFile(join(repo, "d", "a.yaml"), `${doc("a1")}---\n${doc("a2")}`);
  await writeFile(join(repo, "d", "b.yaml"), doc("b1"));
  expect((await plumb("apply", join(repo, "d"), "--yes", "--no-wait")).code).toBe(0);
  // a2 moves from a.yaml to b.yaml: still defined in git, beside the file applied.
  await writeFile(join(repo, "d", "a.yaml"), doc("a1"));
  await writeFile(join(repo, "d", "b.yaml"), `${doc("b1")}---\n${doc("a2")}`);
});

it("apply FILE --prune never deletes an object that moved to another file of its directory", async () => {
  const before = await live();
  const plan = await plumb("plan", join(repo, "d", "a.yaml"), "--prune");
  expect(plan.output).not.toMatch(/delete Deployment a2/);
  const apply = await plumb("apply", join(repo, "d", "a.yaml"), "--prune", "--yes");
  expect(apply.code).toBe(0);
  expect(await live()).toEqual(before); // a2 kept, same id
  // and the directory's apply then has nothing to create
  const tree = await plumb("apply", join(repo, "d"), "--yes", "--prune");
  expect(tree.code).toBe(0);
  expect(await live()).toEqual(before);
});

it("with another file of the directory invalid, the candidate is kept (orphan, why), not deleted", async () => {
  await writeFile(join(repo, "d", "c.yaml"), "apiVersion: plumb/v1\nkind: [\n");
  const before = await live();
  const plan = await plumb("plan", join(repo, "d", "a.yaml"), "--prune");
  expect(plan.output).toMatch(/a2 removed from git \(kept: .* could not be read whole/);
  expect((await plumb("apply", join(repo, "d", "a.yaml"), "--prune", "--yes")).code).toBe(0);
  expect(await live()).toEqual(before);
});

it("a removal from the file that no other file defines is still deleted", async () => {
  await writeFile(join(repo, "d", "b.yaml"), doc("b1")); // a2 gone from git altogether
  const before = await live();
  expect((await plumb("apply", join(repo, "d", "a.yaml"), "--prune", "--yes")).code).toBe(0);
  const after = await live();
  expect([...after.keys()].sort()).toEqual(["a1", "b1"]);
  expect(after.get("a1")).toBe(before.get("a1"));
});

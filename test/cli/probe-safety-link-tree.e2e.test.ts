import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { acquireStateLock } from "../../src/lock/index.js";
import { api } from "../controller/support.js";
import { runInProcess } from "../support/in-process-cli.js";

// A directory PATH given through a symbolic link (`/srv/agents -> /repo/tree`) was taken for a
// file PATH where the stores below it are found (its real path is not the path given): `apply
// LINK` neither locked nor read the stores below the tree, so while an apply of tree/sub held
// sub's store it ran beside it and sent sub's change a second time. Counted on the control plane:
// the revisions of the deployment under sub.

let plane: RunningControlPlane;
let repo: string;
let outside: string;
const env = () => ({ PLUMB_API_URL: plane.url, PLUMB_API_KEY: DEFAULT_API_KEY });
const plumb = (...args: string[]) => runInProcess(args, env());
const file = () => join(repo, "tree", "sub", "a.yaml");
const doc = (tag: string) =>
  `apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: a\nspec:\n  source: internal_container\n  source_revision_config: {image_uri: "img/a:${tag}"}\n`;

const revisions = async () => {
  const client = api(plane.url);
  return (await client.revisions((await client.deployment("a")).id)).length;
};

beforeAll(async () => {
  plane = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
  repo = await mkdtemp(join(tmpdir(), "plumb-link-tree-"));
  outside = await mkdtemp(join(tmpdir(), "plumb-link-tree-out-"));
  execFileSync("git", ["init", "-q", repo]);
  await mkdir(join(repo, "tree", "sub"), { recursive: true });
  await writeFile(file(), doc("1"));
  await symlink(join(repo, "tree"), join(outside, "agents"));
});
afterAll(async () => {
  await plane?.stop();
  await rm(repo, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

it("apply of a tree through a link is refused, sending nothing, while an apply below holds its store", async () => {
  expect((await plumb("apply", join(repo, "tree", "sub"), "--yes", "--no-wait")).code).toBe(0);
  await writeFile(file(), (await readFile(file(), "utf8")).replace("img/a:1", "img/a:2"));
  const before = await revisions();
  const sub = await acquireStateLock(
    { statusDir: join(repo, "tree", "sub", ".plumb", "status") },
    { command: "plumb apply (sub)" },
  );
  try {
    const run = await plumb("apply", join(outside, "agents"), "--yes", "--no-wait");
    expect(run.output).toMatch(/locked/);
    expect(run.code).not.toBe(0);
    expect(await revisions()).toBe(before);
  } finally {
    await sub.release();
  }
  expect((await plumb("apply", join(outside, "agents"), "--yes", "--no-wait")).code).toBe(0);
  expect(await revisions()).toBe(before + 1);
});

import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { acquireStateLock } from "../../src/lock/index.js";
import { api } from "../controller/support.js";
import { startHoldingProxy } from "../support/holding-proxy.js";
import { environmentDoc, plain, runCommand, STAGING_KEY, startTwoPlanes } from "./two-planes.js";

// `apply TREE/sub --status-dir X` locked X only, while `apply TREE` (store TREE/.plumb/status) sends
// the same deployments: run at once, both sent every change under sub. A run with --status-dir now
// also locks the stores nearby in use, and PATH's own default store, where the others look
// (docs/status.md "Stores above and below"). Counted on the control plane's revisions.

let planes: Awaited<ReturnType<typeof startTwoPlanes>>;
let repo: string;
let elsewhere: string;
const env = (url = planes.staging.url) => ({ PLUMB_API_URL: url, PLUMB_API_KEY: STAGING_KEY });
const apply = (path: string, more: string[] = [], url?: string) =>
  runCommand(applyCommand, [path, "--yes", "--no-wait", ...more], planes, env(url));

beforeAll(async () => {
  planes = await startTwoPlanes();
  repo = await mkdtemp(join(tmpdir(), "plumb-status-dir-locks-"));
  elsewhere = await mkdtemp(join(tmpdir(), "plumb-status-dir-elsewhere-"));
  execFileSync("git", ["init", "-q", repo]);
  await mkdir(join(repo, "sub"));
  await writeFile(join(repo, "sub", "a.yaml"), plain("a"));
});
afterAll(async () => {
  await planes?.staging.stop();
  await planes?.prod.stop();
  await rm(repo, { recursive: true, force: true });
  await rm(elsewhere, { recursive: true, force: true });
});

const revisions = async () => {
  const client = api(planes.staging.url, STAGING_KEY);
  return (await client.revisions((await client.deployment("a")).id)).length;
};

const bump = async (tag: string) => {
  const file = join(repo, "sub", "a.yaml");
  await writeFile(file, (await readFile(file, "utf8")).replace(/img\/a:[^"]+/, `img/a:${tag}`));
};

it("apply SUBDIR --status-dir X is refused, sending nothing, while an apply of the tree holds its store", async () => {
  expect((await apply(repo)).code).toBe(0);
  await bump("2");
  const other = await acquireStateLock(
    { statusDir: join(repo, ".plumb", "status") },
    { command: "plumb apply (the tree)" },
  );
  try {
    const refused = apply(join(repo, "sub"), ["--status-dir", join(elsewhere, "x")]);
    await expect(refused).rejects.toMatchObject({ code: "state-locked" });
    await expect(refused).rejects.toThrow(join(repo, ".plumb", "status"));
  } finally {
    await other.release();
  }
  expect(await revisions()).toBe(1);
});

it("apply of the tree is refused while apply SUBDIR --status-dir X is sending; one revision for one change", async () => {
  // No store in use: the tree's apply finds the --status-dir run only by the mark on sub's store.
  await rm(join(repo, "sub", ".plumb"), { recursive: true, force: true });
  await rm(join(repo, ".plumb"), { recursive: true, force: true });
  await bump("3");
  const before = await revisions();
  const proxy = await startHoldingProxy(planes.staging.url);
  try {
    const held = proxy.hold((method) => method === "PATCH");
    const sub = apply(join(repo, "sub"), ["--status-dir", join(elsewhere, "y")], proxy.url);
    // The --status-dir run is sending now (or it ended without sending: the test fails there).
    const patch = await Promise.race([held, sub.then(() => Promise.reject(new Error("sent no PATCH")))]);
    const refused = apply(repo);
    await expect(refused).rejects.toMatchObject({ code: "state-locked" });
    await expect(refused).rejects.toThrow(join(repo, "sub", ".plumb", "status"));
    await patch.forward();
    expect((await sub).code).toBe(0);
  } finally {
    await proxy.close();
  }
  expect(await revisions()).toBe(before + 1);
  expect((await apply(repo)).code).toBe(0); // free again: nothing left to send
  expect(await revisions()).toBe(before + 1);
}, 60_000);

it("with --env, apply SUBDIR --status-dir X is refused while an apply of the tree holds that environment's store", async () => {
  const tree = await mkdtemp(join(tmpdir(), "plumb-status-dir-env-"));
  try {
    execFileSync("git", ["init", "-q", tree]);
    await mkdir(join(tree, "environments"));
    await writeFile(join(tree, "environments", "staging.yaml"), environmentDoc("staging"));
    await writeFile(join(tree, "environments", "prod.yaml"), environmentDoc("prod"));
    await mkdir(join(tree, "sub"));
    // (An override: a sub-directory's manifests then run with the Environments above it.)
    await writeFile(join(tree, "sub", "b.yaml"), `${plain("b")}environments:\n  prod: {}\n`);
    const store = join(tree, ".plumb", "status", "staging");
    const other = await acquireStateLock(
      { statusDir: store },
      { command: "plumb apply (the tree, staging)" },
    );
    try {
      const args = [join(tree, "sub"), "--env", "staging", "--yes", "--status-dir", join(elsewhere, "e")];
      const refused = runCommand(applyCommand, args, planes);
      await expect(refused).rejects.toMatchObject({ code: "state-locked" });
      await expect(refused).rejects.toThrow(store);
    } finally {
      await other.release();
    }
    const client = api(planes.staging.url, STAGING_KEY);
    expect((await client.deployments()).map((d) => d.name)).not.toContain("b"); // nothing sent
  } finally {
    await rm(tree, { recursive: true, force: true });
  }
});

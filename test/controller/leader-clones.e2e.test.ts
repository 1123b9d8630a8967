import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type Controller, startController } from "../../src/controller/controller.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { fastControllerOptions } from "./harness.js";
import { api, container, memoryLogger, waitFor, writeDoc } from "./support.js";

// Controllers in separate clones of one repository (two pods following it), with one status
// branch: one leads, the other stands by. A standby taking over reconciles main's newest commit,
// not the one it cloned at start. Revisions are counted on the control plane.

const exec = promisify(execFile);
const BRANCH = "plumb-status";
let tmp: string;
let cp: RunningControlPlane;
const running: Array<Promise<Controller>> = [];
let seed: string;
const git = (...args: string[]) =>
  exec("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: seed });

beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), "plumb-branch-nearby-"));
  cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
  const origin = join(tmp, "origin.git");
  await exec("git", ["init", "--bare", "-q", "-b", "main", origin]);
  seed = join(tmp, "seed");
  await writeDoc(seed, ".gitignore", ".plumb/\n");
  await writeDoc(join(seed, "deploy"), "a.yaml", container("alpha", "img/alpha:1"));
  await writeDoc(join(seed, "deploy", "sub"), "b.yaml", container("beta", "img/beta:1"));
  await git("init", "-q", "-b", "main");
  await git("add", ".");
  await git("commit", "-qm", "m");
  await git("remote", "add", "origin", origin);
  await git("push", "-q", "origin", "main");
});
afterEach(async () => {
  for (const c of running.splice(0)) await (await c.catch(() => null))?.stop(1_000);
  await cp.stop();
  await rm(tmp, { recursive: true, force: true });
});

const revisions = async () => {
  const client = api(cp.url);
  const counts: Record<string, number> = {};
  for (const d of await client.deployments()) counts[d.name] = (await client.revisions(d.id)).length;
  return counts;
};

/** A controller following origin's main at `path`, in a checkout of its own (a pod). */
const controllerOn = (pod: string, path: string, logger = memoryLogger().logger, intervalMs = 50) => ({
  ...fastControllerOptions(cp, {
    source: {
      kind: "git" as const,
      url: join(tmp, "origin.git"),
      branch: "main",
      path,
      workDir: join(tmp, pod),
      intervalMs,
    },
  }),
  statusBranch: BRANCH,
  logger,
});

/** The tree's controller in pod-a, leading once it applied both deployments. */
async function treeLeader(): Promise<Controller> {
  const leader = await startController(controllerOn("pod-a", "deploy"));
  running.push(Promise.resolve(leader));
  await waitFor("the tree's controller ready", () => leader.ready());
  await waitFor("both applied", async () => (await revisions()).beta === 1);
  return leader;
}

/** beta's image bumped in a commit pushed to main (both controllers follow it). */
const pushBeta = async (tag: string) => {
  await writeDoc(join(seed, "deploy", "sub"), "b.yaml", container("beta", `img/beta:${tag}`));
  await git("commit", "-qam", `beta ${tag}`);
  await git("push", "-q", "origin", "main");
};

it("a standby that takes over reconciles main's newest commit, not the one it cloned at start: nothing rolled back", async () => {
  // It cloned main when it started, and stood by while the leader applied newer commits. Taking
  // over, it reconciled that first checkout: every deployment changed since went back to its old
  // image (a revision) until its next poll moved it forward again (another).
  const leader = await treeLeader();
  const log = memoryLogger();
  const hour = 3_600_000; // no poll of its own to move it forward in time: only the takeover's fetch
  const standby = startController(controllerOn("pod-b", "deploy", log.logger, hour));
  running.push(standby);
  await waitFor("the standby line", () => log.text().includes("standby: another controller leads"));
  await pushBeta("2");
  await waitFor("applied by the leader", async () => (await revisions()).beta === 2);
  await leader.stop(1_000);
  await standby;
  await waitFor("its first reconcile", () => log.text().includes("first reconcile finished"), 15_000);
  expect(await revisions()).toEqual({ alpha: 1, beta: 2 });
  const beta = await api(cp.url).deployment("beta");
  expect(JSON.stringify(beta)).toContain("img/beta:2");
}, 60_000);

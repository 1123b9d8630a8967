import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeEach, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { type Controller, startController } from "../../src/controller/controller.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { readStateLock } from "../../src/lock/index.js";
import { runCommand } from "../cli/two-planes.js";
import { repoTemplate } from "../support/repo-template.js";
import { fastControllerOptions } from "./harness.js";
import { type StandbyWatch, watchStandby } from "./standby-watch.js";
import { api, container, memoryLogger, waitFor, writeDoc } from "./support.js";

// Two writers in separate clones of one repository (two controllers following it with `--path
// deploy` and `--path deploy/sub`, or one and a CI job's apply), on a tree and a directory of it,
// with one status branch: they share no local lock, and both reconcile what
// is under sub/. The branch's lease (refs/plumb/locks/BRANCH, one for every store on the branch)
// is what keeps the later one from sending: it stands by (a controller) or is refused (apply),
// and the refusal names the store whose writer holds the lease. Revisions are counted on the
// control plane. (Were the lease each store's own, both would send every change under sub/.)
// And a standby taking over reconciles main's newest commit, not its first clone's.

const exec = promisify(execFile);
const BRANCH = "plumb-status";
let tmp: string;
let cp: RunningControlPlane;
let watch: StandbyWatch;
const running: Array<Promise<Controller>> = [];
let seed: string;
const git = (...args: string[]) =>
  exec("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: seed });

/** origin.git, the clone `seed` that pushes to it, and a CI job's clone `ci`: made once, copied per test. */
const repositories = repoTemplate(async (dir) => {
  const origin = join(dir, "origin.git");
  const inSeed = (...args: string[]) =>
    exec("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: join(dir, "seed") });
  await exec("git", ["init", "--bare", "-q", "-b", "main", origin]);
  await writeDoc(join(dir, "seed"), ".gitignore", ".plumb/\n");
  await writeDoc(join(dir, "seed", "deploy"), "a.yaml", container("alpha", "img/alpha:1"));
  await writeDoc(join(dir, "seed", "deploy", "sub"), "b.yaml", container("beta", "img/beta:1"));
  await inSeed("init", "-q", "-b", "main");
  await inSeed("add", ".");
  await inSeed("commit", "-qm", "m");
  await inSeed("remote", "add", "origin", origin);
  await inSeed("push", "-q", "origin", "main");
  await exec("git", ["clone", "-q", origin, join(dir, "ci")]);
});
afterAll(() => repositories.remove());

beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), "plumb-branch-nearby-"));
  cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
  await repositories.copyTo(tmp);
  seed = join(tmp, "seed");
  watch = await watchStandby(tmp, BRANCH, cp.url);
});
afterEach(async () => {
  for (const c of running.splice(0)) await (await c.catch(() => null))?.stop(1_000);
  await watch.close();
  await cp.stop();
  await rm(tmp, { recursive: true, force: true });
});

const revisions = async () => {
  const client = api(cp.url);
  const counts: Record<string, number> = {};
  for (const d of await client.deployments()) counts[d.name] = (await client.revisions(d.id)).length;
  return counts;
};

/**
 * A controller following origin's main at `path`, in a checkout of its own (a pod); `watched`: through
 * `watch`'s git server and proxy, which count its lease looks, pushes and API requests. It polls
 * every 250 ms (each poll a fetch: git processes); no assertion here counts polls.
 */
const controllerOn = (
  pod: string,
  path: string,
  logger = memoryLogger().logger,
  intervalMs = 250,
  watched = false,
) => {
  const options = fastControllerOptions(cp, {
    source: {
      kind: "git" as const,
      url: watched ? watch.remote("origin.git") : join(tmp, "origin.git"),
      branch: "main",
      path,
      workDir: join(tmp, pod),
      intervalMs,
    },
  });
  const apiUrl = watched ? watch.apiUrl : cp.url;
  return {
    ...options,
    ...(watched ? { env: watch.env } : {}),
    api: { ...options.api, apiUrl, platformUrl: apiUrl },
    statusBranch: BRANCH,
    logger,
  };
};

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

const applySub = (...flags: string[]) => {
  const env = { PLUMB_API_URL: cp.url, PLUMB_API_KEY: DEFAULT_API_KEY };
  const path = join(tmp, "ci", "deploy", "sub");
  const args = [path, "--status-branch", BRANCH, "--yes", "--no-wait", ...flags];
  return runCommand(applyCommand, args, { staging: cp, prod: cp }, env);
};

it("a controller on the sub-directory in another clone stands by while the tree's leads: one revision per change", async () => {
  const leader = await treeLeader();
  const log = memoryLogger();
  const standby = startController(controllerOn("pod-b", "deploy/sub", log.logger, 250, true));
  running.push(standby);
  let led = false;
  void standby.then(() => (led = true));
  // (Were the lease each store's own, it would lead: the assertions below say so, not a timeout.)
  await waitFor(
    "it stands by or leads",
    () => led || log.text().includes("standby: another controller leads"),
  );

  await pushBeta("2");
  await waitFor("applied by the leader", async () => (await revisions()).beta === 2);
  // The standby had its chance: two looks at the lease from now on, so one whole look (read, then
  // not taken: no push) after the change while the tree's controller led. Taken, it looks no more.
  const looked = watch.looks();
  await waitFor("the standby looked at the lease again", () => watch.looks() >= looked + 2, 20_000);
  expect(watch.pushes()).toBe(0);
  expect(watch.apiRequests).toEqual([]);
  expect(led).toBe(false);
  expect(await revisions()).toEqual({ alpha: 1, beta: 2 });
  const line = log.lines().find((l) => l.msg === "standby: another controller leads");
  expect(String(line?.held)).toContain(`the status branch ${BRANCH} is leased by plumb controller`);
  expect(String(line?.held)).toContain(", writing its store deploy/.plumb/status (one lease for every store");

  await leader.stop(1_000); // releases the lease: the sub-directory's controller leads
  const next = await standby;
  await waitFor("the sub-directory's controller ready", () => next.ready(), 15_000);
  await pushBeta("3");
  await waitFor("applied by the new leader", async () => (await revisions()).beta === 3);
  expect(await revisions()).toEqual({ alpha: 1, beta: 3 });
  // Leading, it pushed (the lease) and sent the change: what the counts above would see.
  expect(watch.pushes()).toBeGreaterThan(0);
  expect(watch.apiRequests.some((r) => r.method === "PATCH")).toBe(true);
}, 60_000);

it("apply of the sub-directory in a CI job's clone is refused, sending nothing, while the tree's controller leads", async () => {
  const leader = await treeLeader();
  await pushBeta("2");
  await waitFor("applied by the leader", async () => (await revisions()).beta === 2);
  // A CI job's apply of a commit not on main yet (a pull request's).
  await writeDoc(join(tmp, "ci", "deploy", "sub"), "b.yaml", container("beta", "img/beta:3"));
  const refused = applySub();
  await expect(refused).rejects.toMatchObject({ code: "state-locked" });
  await expect(refused).rejects.toThrow(`the status branch ${BRANCH} is leased by plumb controller`);
  await expect(refused).rejects.toThrow(", writing its store deploy/.plumb/status (one lease");
  expect(await revisions()).toEqual({ alpha: 1, beta: 2 });

  // With --lock-timeout it waits for the lease, and sends once the controller let go of it.
  const waiting = applySub("--lock-timeout", "30s");
  const ciStore = { statusDir: join(tmp, "ci", "deploy", "sub", ".plumb", "status") };
  await waitFor("the apply holding its local lock, waiting for the lease", () => readStateLock(ciStore));
  expect(await revisions()).toEqual({ alpha: 1, beta: 2 });
  await leader.stop(1_000); // releases the lease
  expect((await waiting).code).toBe(0);
  expect(await revisions()).toEqual({ alpha: 1, beta: 3 });
}, 60_000);

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

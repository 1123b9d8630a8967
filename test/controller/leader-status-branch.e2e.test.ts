import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type Controller, startController } from "../../src/controller/controller.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { fastControllerOptions } from "./harness.js";
import { type StandbyWatch, watchStandby } from "./standby-watch.js";
import { api, container, memoryLogger, waitFor, writeDoc } from "./support.js";

// Two controllers on two checkouts (as on two pods) sharing one status branch: their local locks
// differ, so the lease in the git remote alone decides who leads. One revision per change.

const exec = promisify(execFile);
let tmp: string;
let cp: RunningControlPlane;
let watch: StandbyWatch;
const running: Array<Promise<Controller>> = [];

beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), "plumb-leader-branch-"));
  cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
  const origin = join(tmp, "origin.git");
  await exec("git", ["init", "--bare", "-q", "-b", "main", origin]);
  const seed = join(tmp, "seed");
  await writeDoc(join(seed, "deploy"), "a.yaml", container("alpha", "img/alpha:1"));
  const git = (...args: string[]) =>
    exec("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: seed });
  await git("init", "-q", "-b", "main");
  await git("add", ".");
  await git("commit", "-qm", "m");
  await git("push", "-q", origin, "main");
  for (const pod of ["pod-a", "pod-b"]) await exec("git", ["clone", "-q", origin, join(tmp, pod)]);
  // pod-b (the standby) reaches the same origin through a server that sees its lease looks and pushes.
  watch = await watchStandby(tmp, "plumb-status", cp.url);
  const podB = (...args: string[]) => exec("git", args, { cwd: join(tmp, "pod-b") });
  await podB("remote", "set-url", "origin", watch.remote("origin.git"));
  await podB("config", ...watch.extraHeader);
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

it("one leads, the other stands by; a change is applied once; the standby leads after SIGTERM", async () => {
  const options = (pod: string) => ({
    ...fastControllerOptions(cp, { source: { kind: "dir" as const, dir: join(tmp, pod, "deploy") } }),
    statusBranch: "plumb-status",
    logger: memoryLogger().logger,
  });
  const leader = await startController(options("pod-a"));
  running.push(Promise.resolve(leader));
  await waitFor("leader ready", () => leader.ready());
  const standbyOptions = options("pod-b");
  const standby = startController({
    ...standbyOptions,
    api: { ...standbyOptions.api, apiUrl: watch.apiUrl, platformUrl: watch.apiUrl },
  });
  running.push(standby);
  let led = false;
  void standby.then(() => (led = true));

  for (const pod of ["pod-a", "pod-b"])
    await writeDoc(join(tmp, pod, "deploy"), "a.yaml", container("alpha", "img/alpha:2"));
  await waitFor("applied by the leader", async () => (await revisions()).alpha === 2);
  // The standby had its chance: two looks at the lease from now on, so one whole look (read, then
  // not taken: no push) while the leader led. Had it taken the lease, it would look no more.
  const looked = watch.looks();
  await waitFor("the standby looked at the lease again", () => watch.looks() >= looked + 2, 20_000);
  expect(watch.pushes()).toBe(0);
  expect(watch.apiRequests).toEqual([]);
  expect(led).toBe(false);
  expect(await revisions()).toEqual({ alpha: 2 });

  await leader.stop(1_000); // publishes status, releases the lock and the lease
  const next = await standby;
  await waitFor("standby ready", () => next.ready(), 15_000);
  expect(next.status().objects.map((o) => [o.name, o.sync])).toEqual([["alpha", "Synced"]]);
  expect(await revisions()).toEqual({ alpha: 2 });
  // Leading, it pushed (the lease) and asked the control plane: what the counts above would see.
  expect(watch.pushes()).toBeGreaterThan(0);
  expect(watch.apiRequests.length).toBeGreaterThan(0);
}, 30_000);

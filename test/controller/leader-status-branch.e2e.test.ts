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

// Two controllers on two checkouts (as on two pods) sharing one status branch: their local locks
// differ, so the lease in the git remote alone decides who leads. One revision per change.

const exec = promisify(execFile);
let tmp: string;
let cp: RunningControlPlane;
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

it("one leads, the other stands by; a change is applied once; the standby leads after SIGTERM", async () => {
  const options = (pod: string) => ({
    ...fastControllerOptions(cp, { source: { kind: "dir" as const, dir: join(tmp, pod, "deploy") } }),
    statusBranch: "plumb-status",
    logger: memoryLogger().logger,
  });
  const leader = await startController(options("pod-a"));
  running.push(Promise.resolve(leader));
  await waitFor("leader ready", () => leader.ready());
  const standby = startController(options("pod-b"));
  running.push(standby);

  for (const pod of ["pod-a", "pod-b"])
    await writeDoc(join(tmp, pod, "deploy"), "a.yaml", container("alpha", "img/alpha:2"));
  await waitFor("applied by the leader", async () => (await revisions()).alpha === 2);
  let led = false;
  void standby.then(() => (led = true));
  await new Promise((resolve) => setTimeout(resolve, 300)); // the standby had time to act, and did not
  expect(led).toBe(false);
  expect(await revisions()).toEqual({ alpha: 2 });

  await leader.stop(1_000); // publishes status, releases the lock and the lease
  const next = await standby;
  await waitFor("standby ready", () => next.ready(), 15_000);
  expect(next.status().objects.map((o) => [o.name, o.sync])).toEqual([["alpha", "Synced"]]);
  expect(await revisions()).toEqual({ alpha: 2 });
}, 30_000);

import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, type ExpectStatic, it } from "vitest";
import { runApply } from "../../src/cli/sync/apply.js";
import { runDrift } from "../../src/cli/sync/drift.js";
import { startController } from "../../src/controller/controller.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { startControlPlane } from "../../src/control-plane/server.js";
import { applyFlags, captureIo } from "../cli/reconcile-helpers.js";
import { api, container, memoryLogger, waitFor, writeDoc } from "../controller/support.js";
import { startHoldingProxy } from "../support/holding-proxy.js";

// Issue 23 item 8, one status location: `plumb apply deployments --status-branch B` (CI) and then
// `plumb controller --repo … --path deployments --status-branch B` use the same records, so moving
// from CI to the controller sends nothing (secrets included). Counted on the control plane.

const run = promisify(execFile);
const git = (cwd: string, ...args: string[]) =>
  run("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd });
const NAMES = ["a", "b", "c", "d", "e"];
const BRANCH = "plumb-status";

/**
 * One test's repository (manifests.git and its work clone), control plane and counting proxy: the
 * tests share nothing and run side by side, each for about its own git work (docs/testing.md "Speed").
 */
async function scope(onTestFinished: (fn: () => Promise<void>) => void) {
  const tmp = await mkdtemp(join(tmpdir(), "plumb-status-location-"));
  const cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
  const proxy = await startHoldingProxy(cp.url);
  onTestFinished(async () => {
    await proxy.close();
    await cp.stop();
    await rm(tmp, { recursive: true, force: true });
  });
  const bare = join(tmp, "manifests.git");
  const work = join(tmp, "work");
  await run("git", ["init", "--bare", "-b", "main", bare]);
  await run("git", ["clone", bare, work]);
  await git(work, "checkout", "-B", "main");
  for (const name of NAMES)
    await writeDoc(
      join(work, "deployments"),
      `${name}.yaml`,
      container(name, `img/${name}:1`, { secrets: [{ name: "TOKEN", valueFrom: { env: "TOKEN" } }] }),
    );
  await git(work, "add", ".");
  await git(work, "commit", "-m", "first");
  await git(work, "push", "origin", "main");
  return { tmp, bare, work, cp, proxy };
}

type Scope = Awaited<ReturnType<typeof scope>>;

const branchFiles = async ({ bare }: Scope) =>
  (await run("git", ["--git-dir", bare, "ls-tree", "-r", "--name-only", BRANCH])).stdout.trim().split("\n");

async function applyFromCi({ cp, work }: Scope, expect: ExpectStatic) {
  const io = captureIo(cp);
  io.env = { ...io.env, TOKEN: "t-1" };
  expect(await runApply(join(work, "deployments"), applyFlags({ statusBranch: BRANCH }), io), io.out()).toBe(
    0,
  );
}

async function controllerOnce(s: Scope, checkout: string) {
  const controller = await startLeader(s, checkout);
  await controller.stop(1_000); // publishes the status branch
}

async function startLeader({ bare, proxy, tmp }: Scope, checkout: string) {
  const controller = await startController({
    source: {
      kind: "git",
      url: bare,
      branch: "main",
      path: "deployments",
      workDir: checkout,
      intervalMs: 3_600_000,
    },
    api: { apiUrl: proxy.url, apiKey: DEFAULT_API_KEY, platformUrl: proxy.url },
    statusBranch: BRANCH,
    selfHeal: false,
    concurrency: 2,
    debounceMs: 10,
    backoffBaseMs: 50,
    backoffMaxMs: 200,
    timeoutMs: 10_000,
    pollIntervalMs: 10,
    maxPollIntervalMs: 50,
    env: { PATH: process.env.PATH, HOME: tmp, TOKEN: "t-1" },
    logger: memoryLogger().logger,
  });
  await waitFor("first reconcile of every object", () => controller.ready());
  await waitFor("queue idle", () => controller.status().queue.running === 0);
  return controller;
}

const writes = ({ proxy }: Scope) => proxy.requests.filter((r) => r.method !== "GET");
async function revisions({ cp }: Scope) {
  const client = api(cp.url);
  const counts: Record<string, number> = {};
  for (const d of await client.deployments()) counts[d.name] = (await client.revisions(d.id)).length;
  return counts;
}
const ONE_EACH = Object.fromEntries(NAMES.map((n) => [n, 1]));
const RECORDS = NAMES.map((n) => `deployments/.plumb/status/deployment.${n}.json`);

describe.concurrent("one status location for the CLI and the controller", () => {
  it("apply in CI, then the controller with --path on the same status branch: zero PATCHes", async ({
    expect,
    onTestFinished,
  }) => {
    const s = await scope(onTestFinished);
    const { tmp } = s;
    await applyFromCi(s, expect);
    expect(await branchFiles(s)).toEqual(RECORDS);
    await controllerOnce(s, join(tmp, "checkout"));
    expect(writes(s)).toEqual([]);
    expect(await revisions(s)).toEqual(ONE_EACH);
    expect(await branchFiles(s)).toEqual(RECORDS);
  });

  it("records in the older controller layout (.plumb/status at the branch root) are read and moved once", async ({
    expect,
    onTestFinished,
  }) => {
    const s = await scope(onTestFinished);
    const { bare, tmp } = s;
    await applyFromCi(s, expect);
    // The branch as a controller before one status location left it.
    const status = join(tmp, "status");
    await run("git", ["clone", "--branch", BRANCH, bare, status]);
    await git(status, "mv", "deployments/.plumb", ".plumb");
    await git(status, "commit", "-m", "older layout");
    await git(status, "push", "origin", BRANCH);
    expect(await branchFiles(s)).toEqual(NAMES.map((n) => `.plumb/status/deployment.${n}.json`));

    await controllerOnce(s, join(tmp, "checkout"));
    expect(writes(s)).toEqual([]);
    expect(await revisions(s)).toEqual(ONE_EACH);
    expect(await branchFiles(s)).toEqual(RECORDS);
    // Moved once: a fresh controller finds them in the new place and sends nothing either.
    await controllerOnce(s, join(tmp, "checkout-2"));
    expect(writes(s)).toEqual([]);
  });

  it("older-layout records at paths where a commit put files: kept on the branch, the commit's files not written over", async ({
    expect,
    onTestFinished,
  }) => {
    const s = await scope(onTestFinished);
    const { bare, work, tmp } = s;
    await applyFromCi(s, expect);
    // The older layout, with the records of two objects managed elsewhere (zed, yon) besides a..e.
    const status = join(tmp, "status");
    await run("git", ["clone", "--branch", BRANCH, bare, status]);
    await git(status, "mv", "deployments/.plumb", ".plumb");
    const a = JSON.parse(await readFile(join(status, ".plumb/status/deployment.a.json"), "utf8")) as object;
    const elsewhere = (name: string) => ({ ...a, name, id: `id-of-${name}` });
    for (const name of ["zed", "yon"])
      await writeFile(join(status, `.plumb/status/deployment.${name}.json`), JSON.stringify(elsewhere(name)));
    await git(status, "add", "-A");
    await git(status, "commit", "-m", "older layout");
    await git(status, "push", "origin", BRANCH);
    // A commit on main puts files at those records' paths: a forged record and something else.
    await writeDoc(
      join(work, ".plumb/status"),
      "deployment.zed.json",
      JSON.stringify({ ...elsewhere("zed"), id: "forged" }),
    );
    await writeFile(join(work, ".plumb/status/deployment.yon.json"), "not a record\n");
    // And one at the older-layout path of a record that moves (a's): the move removes no file git tracks.
    await writeFile(join(work, ".plumb/status/deployment.a.json"), "the commit's\n");
    await git(work, "add", "-f", ".plumb");
    await git(work, "commit", "-m", "a store committed at the root");
    await git(work, "push", "origin", "main");

    const checkout = join(tmp, "checkout");
    await controllerOnce(s, checkout);
    expect(writes(s)).toEqual([]);
    // a..e moved; the two records left in the older layout stay on the branch, as they were: the
    // publish of that layout skipped the files git tracks and put nothing in their place.
    expect(await branchFiles(s)).toEqual([
      ".plumb/status/deployment.yon.json",
      ".plumb/status/deployment.zed.json",
      ...RECORDS,
    ]);
    for (const name of ["zed", "yon"]) {
      const shown = await run("git", [
        "--git-dir",
        bare,
        "show",
        `${BRANCH}:.plumb/status/deployment.${name}.json`,
      ]);
      expect(JSON.parse(shown.stdout)).toEqual(elsewhere(name));
    }
    // The commit's files in the checkout are as committed: the branch's records were not written
    // over them (yon's, not read as a record, was), and a's move did not delete its file.
    expect((await git(checkout, "diff", "--name-only")).stdout).toBe("");
  });

  it("drift while the controller holds the status branch's lease reports only: nothing pushed", async ({
    expect,
    onTestFinished,
  }) => {
    const s = await scope(onTestFinished);
    const { bare, work, tmp, cp } = s;
    await applyFromCi(s, expect);
    const leader = await startLeader(s, join(tmp, "checkout"));
    try {
      const head = async () => (await run("git", ["--git-dir", bare, "rev-parse", BRANCH])).stdout.trim();
      const before = await head();
      await api(cp.url).call("PATCH", `/v2/deployments/${(await api(cp.url).deployment("a")).id}`, {
        source_revision_config: { image_uri: "img/a:ui" },
      });
      const io = captureIo(cp);
      io.env = { ...io.env, TOKEN: "t-1" };
      const flags = { output: "text" as const, target: [], statusBranch: BRANCH };
      expect(await runDrift(join(work, "deployments"), flags, io)).toBe(2);
      expect(io.err()).toContain("plumb drift reports only: status records not written");
      // Nothing of drift's was pushed: the leader may publish its own records meanwhile (a loaded
      // machine's startup publish came after `before` once), so its commits are told apart.
      const since = await run("git", ["--git-dir", bare, "log", "--format=%s", `${before}..${BRANCH}`]);
      const subjects = since.stdout.split("\n").filter(Boolean);
      expect(subjects.filter((subject) => !subject.startsWith("plumb controller:"))).toEqual([]);
    } finally {
      await leader.stop(1_000);
    }
  });
});

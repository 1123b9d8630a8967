import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, expect, it } from "vitest";
import { readApiOptions } from "../../../src/api/config.js";
import { settingsOf } from "../../../src/cli/environments.js";
import {
  type Controller,
  type ControllerStartOptions,
  startController,
} from "../../../src/controller/controller.js";
import { applyCommand } from "../../../src/cli/sync/apply.js";
import { DEFAULT_TENANT_ID } from "../../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../../src/control-plane/server.js";
import type { LoadedEnvironment } from "../../../src/manifest/types.js";
import { appliedDigest } from "../../../src/status/checks/checks-record-applied.js";
import type { ObjectStatus } from "../../../src/status/status-types.js";
import { fastControllerOptions } from "../harness.js";
import { startReceiver } from "../notify-receiver.js";
import { api, memoryLogger, waitFor } from "../support.js";
import { TEST_POLL } from "../../cli/reconcile-helpers.js";

// controller --promote-branch-prefix: prod has promotion.auto; once staging runs a pinned version
// that prod does not, the controller opens the promotion as branch PREFIX+prod of its git source
// (only prod's override line changes, the evidence in the message), notifies promotion-ready once,
// and does not push or notify again while the branch already holds that change. main is untouched.

const run = promisify(execFile);
const git = (cwd: string, ...args: string[]) =>
  run("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd });

const STAGING_KEY = "staging-key-0123456789abcdef";
const PROD_KEY = "prod-key-0123456789abcdef0123";

const environment = (name: string, url: string, keyVar: string, extra = "") => `apiVersion: plumb/v1
kind: Environment
metadata:
  name: ${name}
spec:
  api_url: ${url}
  api_key: {env: ${keyVar}}
${extra}`;

const ALPHA = `# The alpha agent.
apiVersion: plumb/v1
kind: Deployment
metadata:
  name: alpha
spec:
  source: internal_container
  source_revision_config:
    image_uri: img/alpha:2.0.0 # the release candidate
environments:
  prod:
    spec:
      source_revision_config:
        image_uri: img/alpha:1.0.0 # what prod runs
`;

let tmp: string;
let bare: string;
let staging: RunningControlPlane;
let prod: RunningControlPlane;
let controller: Controller | undefined;
const closers: Array<() => Promise<void>> = [];
const grant = (key: string) => ({ apiKeys: [{ key, tenants: [DEFAULT_TENANT_ID] }] });

beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), "plumb-ctl-promote-"));
  staging = await startControlPlane({
    revisionSeconds: 0.02,
    deploymentReadySeconds: 0,
    ...grant(STAGING_KEY),
  });
  prod = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0, ...grant(PROD_KEY) });
  bare = join(tmp, "manifests.git");
  const work = join(tmp, "work");
  await run("git", ["init", "--bare", "-b", "main", bare]);
  await run("git", ["clone", bare, work]);
  await git(work, "checkout", "-B", "main");
  await mkdir(join(work, "deploy"), { recursive: true });
  await writeFile(join(work, "deploy", "staging.yaml"), environment("staging", staging.url, "STAGING_KEY"));
  await writeFile(
    join(work, "deploy", "prod.yaml"),
    environment(
      "prod",
      prod.url,
      "PROD_KEY",
      "  promotion: {from: staging, gates: {deployed: true}, auto: true}\n",
    ),
  );
  await writeFile(join(work, "deploy", "alpha.yaml"), ALPHA);
  await git(work, "add", ".");
  await git(work, "commit", "-m", "first");
  await git(work, "push", "origin", "main");
});
afterEach(async () => {
  await controller?.stop(1_000);
  controller = undefined;
  for (const close of closers.splice(0)) await close();
  await staging.stop();
  await prod.stop();
  await rm(tmp, { recursive: true, force: true });
});

const start = async (
  notifyUrl: string,
  extra: Partial<ControllerStartOptions> = {},
  keys: Record<string, string> = { STAGING_KEY, PROD_KEY },
) => {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, ...keys };
  controller = await startController({
    ...fastControllerOptions(staging, {
      source: {
        kind: "git",
        url: bare,
        branch: "main",
        path: "deploy",
        workDir: join(tmp, "checkout"),
        intervalMs: 3_600_000,
      },
      promoteBranchPrefix: "plumb/promote/",
      notify: { urls: [notifyUrl] },
      env,
    }),
    api: () => {
      throw new Error("a tree with environments must not read PLUMB_API_URL");
    },
    environmentApi: (e: LoadedEnvironment, root: string) => {
      const settings = settingsOf(e, root, env);
      return readApiOptions(settings.env, settings.flags);
    },
    ...extra,
  });
  return controller;
};

it("opens prod's promotion as a branch once staging's version is deployed, and announces it once", async () => {
  const receiver = await startReceiver();
  closers.push(() => receiver.close());
  const c = await start(receiver.url);
  await waitFor("both environments reconciled", async () => {
    const [s, p] = await Promise.all([
      api(staging.url, STAGING_KEY).deployments(),
      api(prod.url, PROD_KEY).deployments(),
    ]);
    return s.length === 1 && p.length === 1 && c.ready();
  });
  const promoted = () => receiver.events().filter((e) => e.event === "promotion-ready");
  await waitFor("promotion opened", async () => {
    await c.checkDrift();
    return promoted().length === 1;
  });
  const show = async (ref: string) => (await run("git", ["--git-dir", bare, "show", ref])).stdout;
  expect(await show("plumb/promote/prod:deploy/alpha.yaml")).toBe(
    ALPHA.replace(
      "image_uri: img/alpha:1.0.0 # what prod runs",
      "image_uri: img/alpha:2.0.0 # what prod runs",
    ),
  );
  expect(await show("main:deploy/alpha.yaml")).toBe(ALPHA);
  const message = (await run("git", ["--git-dir", bare, "log", "-1", "--format=%B", "plumb/promote/prod"]))
    .stdout;
  expect(message).toContain("plumb: promote staging to prod (alpha)");
  expect(message).toContain("alpha source_revision_config.image_uri: img/alpha:1.0.0 -> img/alpha:2.0.0");
  expect(message).toMatch(/from staging alpha, revision [0-9a-f-]+ \(DEPLOYED\), deployed at /);
  expect(promoted()[0]).toMatchObject({
    fields: ["alpha source_revision_config.image_uri"],
    message: "staging to prod: alpha on branch plumb/promote/prod; review and merge it",
  });
  // The branch already holds that change: a later check neither pushes nor announces it again.
  const head = (await run("git", ["--git-dir", bare, "rev-parse", "plumb/promote/prod"])).stdout;
  await c.checkDrift();
  expect((await run("git", ["--git-dir", bare, "rev-parse", "plumb/promote/prod"])).stdout).toBe(head);
  expect(promoted()).toHaveLength(1);
  // prod itself still runs its own version: the promotion waits for review.
  expect((await api(prod.url, PROD_KEY).deployment("alpha")).source_revision_config.image_uri).toBe(
    "img/alpha:1.0.0",
  );
});

it("an unrelated commit to main neither pushes nor announces again; a new version does, once", async () => {
  const receiver = await startReceiver();
  closers.push(() => receiver.close());
  const c = await start(receiver.url);
  const promoted = () => receiver.events().filter((e) => e.event === "promotion-ready");
  await waitFor("promotion opened", async () => {
    await c.checkDrift();
    return promoted().length === 1;
  });
  const headOf = async () =>
    (await run("git", ["--git-dir", bare, "rev-parse", "plumb/promote/prod"])).stdout;
  const opened = await headOf();
  const work = join(tmp, "work");
  const commit = async (message: string, file: string, text: string) => {
    await writeFile(join(work, file), text);
    await git(work, "add", ".");
    await git(work, "commit", "-qm", message);
    await git(work, "push", "-q", "origin", "main");
    await c.sync();
  };
  // Unrelated to the promotion: a file outside the manifests, and a comment of the file it edits.
  await writeFile(join(work, "README.md"), "the manifests\n");
  await commit("comment", "deploy/alpha.yaml", ALPHA.replace("# The alpha agent.", "# The alpha agent, v2."));
  const main = (await run("git", ["--git-dir", bare, "rev-parse", "main"])).stdout;
  await waitFor(
    "main checked out",
    async () => (await git(join(tmp, "checkout"), "rev-parse", "HEAD")).stdout === main,
  );
  await c.checkDrift();
  await c.checkDrift();
  expect(await headOf()).toBe(opened);
  expect(promoted()).toHaveLength(1);

  // A new version in staging: the branch is rebuilt with it and announced once.
  const next = ALPHA.replace("# The alpha agent.", "# The alpha agent, v2.").replace(
    "img/alpha:2.0.0 # the release candidate",
    "img/alpha:3.0.0 # the release candidate",
  );
  await commit("alpha 3.0.0", "deploy/alpha.yaml", next);
  await waitFor("new version announced", async () => {
    await c.checkDrift();
    return promoted().length === 2;
  });
  await c.checkDrift();
  expect(promoted()).toHaveLength(2);
  expect(await run("git", ["--git-dir", bare, "show", "plumb/promote/prod:deploy/alpha.yaml"])).toMatchObject(
    {
      stdout: next.replace("img/alpha:1.0.0 # what prod runs", "img/alpha:3.0.0 # what prod runs"),
    },
  );
});

it("staging's key refused: the promotion's error names staging's spec.api_key, not PLUMB_API_KEY", async () => {
  const receiver = await startReceiver();
  closers.push(() => receiver.close());
  const memory = memoryLogger();
  const wrong = "wrong-staging-key-0123456789";
  const c = await start(receiver.url, { logger: memory.logger }, { STAGING_KEY: wrong, PROD_KEY });
  const notOpened = () =>
    memory.lines().find((l) => l.msg === "promotion branch not opened")?.err as string | undefined;
  const error = await waitFor("promotion refused", async () => {
    await c.checkDrift();
    return notOpened();
  });
  expect(error).toContain("401");
  expect(error).toContain("check environment staging's spec.api_key ($STAGING_KEY, staging.yaml:7)");
  expect(error).not.toContain("PLUMB_API_KEY");
  expect(memory.text()).not.toContain(wrong);
});

it("a replica that does not lead staging reads staging's records from the status branch", async () => {
  // staging's checks are recorded only where staging's leader publishes them: ENV/ on the branch.
  const work = join(tmp, "work", "deploy");
  await writeFile(
    join(work, "prod.yaml"),
    environment(
      "prod",
      prod.url,
      "PROD_KEY",
      "  promotion: {from: staging, gates: {deployed: true, checks: {min_pass_ratio: 0.9}}, auto: true}\n",
    ),
  );
  await git(join(tmp, "work"), "commit", "-qam", "prod gated on staging's checks");
  await git(join(tmp, "work"), "push", "-q", "origin", "main");
  const apply = async (...args: string[]) => {
    const io = {
      stdout: { write: () => true },
      stderr: { write: () => true },
      env: { ...process.env, STAGING_KEY, PROD_KEY },
      poll: TEST_POLL,
    };
    process.exitCode = 0;
    await applyCommand(io).parseAsync([work, "--env", "staging", "--yes", ...args], { from: "user" });
    expect(process.exitCode).toBe(0);
  };
  await apply();
  const file = join(work, ".plumb", "status", "staging", "deployment.alpha.json");
  const record = JSON.parse(await readFile(file, "utf8")) as ObjectStatus;
  const checks = {
    ...{ revision_id: record.latest_revision_id, at: new Date().toISOString(), runs: 10, passed: 10 },
    ...{ pass_ratio: 1, latency_ms: { p50: 100, p95: 200, max: 250 } },
    applied_digest: appliedDigest(record), // verified what the record says is applied
  };
  await writeFile(file, JSON.stringify({ ...record, checks }, null, 2));
  await apply("--status-branch", "plumb-status"); // publishes staging's records, checks included

  const receiver = await startReceiver();
  closers.push(() => receiver.close());
  // This replica leads prod only: its own status directory has no record of staging.
  const c = await start(receiver.url, { environments: ["prod"], statusBranch: "plumb-status" });
  await waitFor(
    "prod reconciled",
    async () => (await api(prod.url, PROD_KEY).deployments()).length === 1 && c.ready(),
  );
  const promoted = () => receiver.events().filter((e) => e.event === "promotion-ready");
  await waitFor("promotion opened", async () => {
    await c.checkDrift();
    return promoted().length === 1;
  });
  const message = (await run("git", ["--git-dir", bare, "log", "-1", "--format=%B", "plumb/promote/prod"]))
    .stdout;
  expect(message).toContain("checks holds: 10/10 passed");
  expect(await api(staging.url, STAGING_KEY).deployments()).toHaveLength(1); // applied once, by the CLI
});

it("needs a git source", async () => {
  await expect(
    startController(
      fastControllerOptions(staging, { source: { kind: "dir", dir: tmp }, promoteBranchPrefix: "p/" }),
    ),
  ).rejects.toMatchObject({ code: "usage" });
});

import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { DEFAULT_TENANT_ID } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { writeDoc } from "../controller/support.js";
import { TEST_POLL } from "./reconcile-helpers.js";

// --status-branch with --env: each environment's records go under .plumb/status/ENV/ on the status
// branch (its lease its own: one environment's apply does not wait for another's).

const exec = promisify(execFile);
const git = (cwd: string, ...args: string[]) =>
  exec("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd });
const STAGING_KEY = "staging-key-0123456789abcdef";
const PROD_KEY = "prod-key-0123456789abcdef0123";
let staging: RunningControlPlane;
let prod: RunningControlPlane;
let dir: string;

beforeAll(async () => {
  const grant = (key: string) => ({ apiKeys: [{ key, tenants: [DEFAULT_TENANT_ID] }] });
  staging = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0, ...grant(STAGING_KEY) });
  prod = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0, ...grant(PROD_KEY) });
  dir = await mkdtemp(join(tmpdir(), "plumb-env-branch-"));
  const environment = (name: string, url: string, key: string) =>
    `apiVersion: plumb/v1\nkind: Environment\nmetadata: {name: ${name}}\nspec: {api_url: "${url}", api_key: {env: ${key}}}\n`;
  await writeDoc(dir, "env-staging.yaml", environment("staging", staging.url, "STAGING_KEY"));
  await writeDoc(dir, "env-prod.yaml", environment("prod", prod.url, "PROD_KEY"));
  await writeDoc(dir, "alpha.yaml", {
    apiVersion: "plumb/v1",
    kind: "Deployment",
    metadata: { name: "alpha" },
    spec: { source: "internal_container", source_revision_config: { image_uri: "img/alpha:1" } },
  });
  await exec("git", ["init", "-q", "-b", "main", dir]);
  await git(dir, "add", ".");
  await git(dir, "commit", "-qm", "manifests");
});
afterAll(async () => {
  await staging?.stop();
  await prod?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function run(command: typeof planCommand | typeof applyCommand, args: string[]) {
  let out = "";
  let err = "";
  process.exitCode = 0;
  const io = {
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t) },
    env: { STAGING_KEY, PROD_KEY },
    poll: TEST_POLL,
  };
  await command(io).parseAsync(args, { from: "user" });
  const code = process.exitCode;
  process.exitCode = 0;
  return { out, err, code };
}

it("apply --status-branch keeps each environment's records under ENV/ on the branch", async () => {
  const applied = await run(applyCommand, [dir, "--yes", "--status-branch", "plumb-status"]);
  expect(applied.err).toBe("");
  expect(applied.code).toBe(0);
  const files = (await git(dir, "ls-tree", "-r", "--name-only", "plumb-status")).stdout.split("\n");
  expect(files.filter((f) => f.endsWith(".json")).sort()).toEqual([
    ".plumb/status/prod/deployment.alpha.json",
    ".plumb/status/staging/deployment.alpha.json",
  ]);
  // A fresh checkout (no local store) plans from the branch's records: nothing to do.
  await rm(join(dir, ".plumb"), { recursive: true, force: true });
  const plan = await run(planCommand, [dir, "--status-branch", "plumb-status", "--detailed-exitcode"]);
  expect(plan.code).toBe(0);
}, 60_000);

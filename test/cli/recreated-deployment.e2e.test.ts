import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { api } from "../controller/support.js";
import { PROD_KEY, runCommand, STAGING_KEY, startTwoPlanes, withSecrets } from "./two-planes.js";

// A recorded fingerprint speaks of the deployment it was applied to (its id), not of any deployment
// of that name: one deleted and created again outside plumb, or a record another control plane's
// apply wrote in a store nearby, says nothing about this one's secrets, so they are sent again
// (plan-object.ts forLiveDeployment, applied-nearby.ts). Counted on the control planes.

let staging: RunningControlPlane;
let prod: RunningControlPlane;
const dirs: string[] = [];

beforeAll(async () => {
  ({ staging, prod } = await startTwoPlanes());
});
afterAll(async () => {
  await staging?.stop();
  await prod?.stop();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function repo(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "plumb-recreated-"));
  dirs.push(dir);
  execFileSync("git", ["init", "-q", dir]);
  return dir;
}

/** A command against one control plane (no environments): PLUMB_API_URL and PLUMB_API_KEY name it. */
const on = (plane: RunningControlPlane, key: string) => (build: typeof planCommand, args: string[]) =>
  runCommand(
    build,
    args,
    { staging, prod },
    { PLUMB_API_URL: plane.url, PLUMB_API_KEY: key, AGENT_TOKEN: "t-1" },
  );

const revisionsOf = async (plane: RunningControlPlane, key: string, name: string) => {
  const client = api(plane.url, key);
  return (await client.revisions((await client.deployment(name)).id)).length;
};

it("sends the secrets again to a deployment deleted and created again outside plumb under the same name", async () => {
  const dir = await repo();
  await writeFile(join(dir, "a.yaml"), withSecrets("recreated", "fast"));
  const run = on(staging, STAGING_KEY);
  expect((await run(applyCommand, [dir, "--yes"])).code).toBe(0);

  // Someone deletes it and creates one of the same name with other secret values.
  const { call, deployment } = api(staging.url, STAGING_KEY);
  await call("DELETE", `/v2/deployments/${(await deployment("recreated")).id}`);
  await call("POST", "/v2/deployments", {
    name: "recreated",
    source: "internal_container",
    source_config: {},
    source_revision_config: { image_uri: "img/recreated:1" },
    secrets: [
      { name: "API_TOKEN", value: "someone-elses" },
      { name: "MODE", value: "slow" },
    ],
  });
  const before = await revisionsOf(staging, STAGING_KEY, "recreated");

  const plan = await run(planCommand, [dir, "--output", "json"]);
  const [change] = (
    JSON.parse(plan.out) as { changes: Array<{ action: string; changed_secrets?: string[] }> }
  ).changes;
  expect(change!.action).toBe("update"); // was "noop": the old deployment's fingerprints matched

  expect((await run(applyCommand, [dir, "--yes"])).code).toBe(0);
  expect(await revisionsOf(staging, STAGING_KEY, "recreated")).toBe(before + 1);
  // Recorded for the new deployment now: the next plan has nothing to send.
  const again = await run(planCommand, [dir, "--output", "json"]);
  expect((JSON.parse(again.out) as { changes: Array<{ action: string }> }).changes[0]!.action).toBe("noop");
});

it("does not take a later apply to another control plane, recorded in the store above, for this one's", async () => {
  const dir = await repo();
  await mkdir(join(dir, "sub"));
  await writeFile(join(dir, "sub", "a.yaml"), withSecrets("elsewhere", "fast"));
  // The sub-directory is applied to staging; then the secret changes and the tree goes to prod.
  expect((await on(staging, STAGING_KEY)(applyCommand, [join(dir, "sub"), "--yes"])).code).toBe(0);
  await writeFile(join(dir, "sub", "a.yaml"), withSecrets("elsewhere", "slow"));
  expect((await on(prod, PROD_KEY)(applyCommand, [dir, "--yes"])).code).toBe(0);
  const before = await revisionsOf(staging, STAGING_KEY, "elsewhere");

  // Staging still has "fast": the tree's later record is prod's deployment, not staging's.
  expect((await on(staging, STAGING_KEY)(applyCommand, [join(dir, "sub"), "--yes"])).code).toBe(0);
  expect(await revisionsOf(staging, STAGING_KEY, "elsewhere")).toBe(before + 1);
});

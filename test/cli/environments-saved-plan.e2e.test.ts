import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { api } from "../controller/support.js";
import { environmentDoc, plain, PROD_KEY, runCommand, STAGING_KEY, startTwoPlanes } from "./two-planes.js";

// Saved plans with environments (docs/environments.md, "Saved plans"): plan --out saves each
// environment's plan with the control plane it was computed against; apply --plan applies each
// part with that environment's client, refuses a part that went stale or whose environment now
// resolves to another control plane, and --env filters both. Counted on two control planes.

let staging: RunningControlPlane;
let prod: RunningControlPlane;
let dir: string;
let planFile: string;

const environment = environmentDoc;

const deployment = (image: string, prodImage: string) => `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: support-agent
spec:
  source: internal_container
  source_revision_config: {image_uri: "${image}"}
environments:
  prod:
    spec:
      source_revision_config: {image_uri: "${prodImage}"}
`;

beforeEach(async () => {
  ({ staging, prod } = await startTwoPlanes());
  dir = await mkdtemp(join(tmpdir(), "plumb-env-saved-plan-"));
  planFile = `${dir}.plan.json`;
  await mkdir(join(dir, "environments"));
  await writeFile(join(dir, "environments", "staging.yaml"), environment("staging"));
  await writeFile(join(dir, "environments", "prod.yaml"), environment("prod"));
  await writeFile(join(dir, "support-agent.yaml"), deployment("img/agent:2", "img/agent:1"));
});
afterEach(async () => {
  await staging?.stop();
  await prod?.stop();
  await rm(dir, { recursive: true, force: true });
  await rm(planFile, { force: true });
});

const run = (command: typeof planCommand | typeof applyCommand, args: string[], env = {}) =>
  runCommand(command, args, { staging, prod }, env);

/** Every deployment of a control plane with its image and number of revisions. */
async function counted(cp: RunningControlPlane, key: string) {
  const client = api(cp.url, key);
  const rows = [];
  for (const d of await client.deployments())
    rows.push({
      name: d.name,
      image: d.source_revision_config?.image_uri,
      revisions: (await client.revisions(d.id)).length,
    });
  return rows;
}

type SavedFile = { environments: Array<{ environment: string; target: { api_url: string } }> };

describe("saved plans with environments", () => {
  it("plan --out saves each environment's plan and target; apply --plan applies each with its own client", async () => {
    const planned = await run(planCommand, [dir, "--out", planFile]);
    expect(planned.code).toBe(0);
    expect(planned.err).toContain(`saved to ${planFile}`);
    const saved = JSON.parse(await readFile(planFile, "utf8")) as SavedFile;
    expect(saved.environments.map((e) => [e.environment, e.target.api_url])).toEqual([
      ["prod", prod.url],
      ["staging", staging.url],
    ]);
    expect(await counted(staging, STAGING_KEY)).toEqual([]);
    const applied = await run(applyCommand, [dir, "--plan", planFile, "--yes"]);
    expect(applied.code).toBe(0);
    expect(await counted(staging, STAGING_KEY)).toEqual([
      { name: "support-agent", image: "img/agent:2", revisions: 1 },
    ]);
    expect(await counted(prod, PROD_KEY)).toEqual([
      { name: "support-agent", image: "img/agent:1", revisions: 1 },
    ]);
  });

  it("--env filters the plan saved and the parts applied", async () => {
    expect((await run(planCommand, [dir, "--out", planFile])).code).toBe(0);
    const applied = await run(applyCommand, [dir, "--plan", planFile, "--env", "staging", "--yes"]);
    expect(applied.code).toBe(0);
    expect(applied.out).not.toContain("environment prod");
    expect(await counted(staging, STAGING_KEY)).toHaveLength(1);
    expect(await counted(prod, PROD_KEY)).toEqual([]);
    // A plan of prod alone holds no staging part: applying it to staging is refused, nothing sent.
    expect((await run(planCommand, [dir, "--env", "prod", "--out", planFile])).code).toBe(0);
    const saved = JSON.parse(await readFile(planFile, "utf8")) as SavedFile;
    expect(saved.environments.map((e) => e.environment)).toEqual(["prod"]);
    await expect(
      run(applyCommand, [dir, "--plan", planFile, "--env", "staging", "--yes"]),
    ).rejects.toMatchObject({ code: "plan-environment-mismatch" });
    // Without --env, the environments it holds: prod only.
    expect((await run(applyCommand, [dir, "--plan", planFile, "--yes"])).code).toBe(0);
    expect(await counted(prod, PROD_KEY)).toHaveLength(1);
    expect((await counted(staging, STAGING_KEY))[0]!.revisions).toBe(1);
  });

  it("a part whose environment now resolves to another control plane refuses the whole apply before anything is sent", async () => {
    expect((await run(planCommand, [dir, "--out", planFile])).code).toBe(0);
    // staging's api_url variable now points at prod's control plane (with a key it accepts).
    // prod comes first in the file and is still right: it must not be applied either.
    const moved = { STAGING_API_URL: prod.url, STAGING_API_KEY: PROD_KEY };
    const refused = run(applyCommand, [dir, "--plan", planFile, "--yes"], moved);
    await expect(refused).rejects.toMatchObject({ code: "plan-environment-mismatch" });
    await expect(refused).rejects.toThrow(`computed against ${staging.url}`);
    expect(await counted(staging, STAGING_KEY)).toEqual([]);
    expect(await counted(prod, PROD_KEY)).toEqual([]);
  });

  it("a stale environment's part is refused (plan-stale), nothing sent to it", async () => {
    expect((await run(applyCommand, [dir, "--yes"])).code).toBe(0);
    await writeFile(join(dir, "support-agent.yaml"), deployment("img/agent:3", "img/agent:2"));
    expect((await run(planCommand, [dir, "--env", "prod", "--out", planFile])).code).toBe(0);
    // Someone changes prod in the UI after the review.
    const client = api(prod.url, PROD_KEY);
    const live = await client.deployment("support-agent");
    await client.call("PATCH", `/v2/deployments/${live.id}`, {
      source_revision_config: { image_uri: "img/agent:hotfix" },
    });
    const before = await counted(prod, PROD_KEY);
    await expect(run(applyCommand, [dir, "--plan", planFile, "--yes"])).rejects.toMatchObject({
      code: "plan-stale",
    });
    expect(await counted(prod, PROD_KEY)).toEqual(before);
    expect(await counted(staging, STAGING_KEY)).toEqual([
      { name: "support-agent", image: "img/agent:2", revisions: 1 },
    ]);
  });

  it("a part already stale when the apply starts refuses the whole apply: no environment applied", async () => {
    expect((await run(applyCommand, [dir, "--yes"])).code).toBe(0);
    await writeFile(join(dir, "support-agent.yaml"), deployment("img/agent:3", "img/agent:2"));
    expect((await run(planCommand, [dir, "--out", planFile])).code).toBe(0); // prod's part, then staging's
    // Someone changes staging, the second part, in the UI after the review.
    const client = api(staging.url, STAGING_KEY);
    const live = await client.deployment("support-agent");
    await client.call("PATCH", `/v2/deployments/${live.id}`, {
      source_revision_config: { image_uri: "img/agent:hotfix" },
    });
    const [prodBefore, stagingBefore] = [await counted(prod, PROD_KEY), await counted(staging, STAGING_KEY)];
    const refused = run(applyCommand, [dir, "--plan", planFile, "--yes"]);
    await expect(refused).rejects.toMatchObject({ code: "plan-stale" });
    await expect(refused).rejects.toThrow("environment staging: the saved plan");
    await expect(refused).rejects.toThrow("nothing was sent to any environment");
    // prod, first in the file and not stale, was not applied either.
    expect(await counted(prod, PROD_KEY)).toEqual(prodBefore);
    expect(prodBefore).toEqual([{ name: "support-agent", image: "img/agent:1", revisions: 1 }]);
    expect(await counted(staging, STAGING_KEY)).toEqual(stagingBefore);
  });

  it("a part whose environment PATH no longer defines names the plan file, not --env", async () => {
    await writeFile(join(dir, "support-agent.yaml"), plain("support-agent"));
    expect((await run(planCommand, [dir, "--env", "prod", "--out", planFile])).code).toBe(0);
    // prod's Environment is renamed after the review: the names come from the file, not from --env
    // (it said `unknown environment "prod" in --env`, a usage error, of a flag never given).
    await writeFile(join(dir, "environments", "prod.yaml"), environmentDoc("production"));
    const said = `${planFile} holds the plan of environment prod, which PATH does not define (defined: production, staging): plan again with plumb plan --out; nothing was sent`;
    for (const env of [[], ["--env", "prod"]]) {
      const refused = run(applyCommand, [dir, "--plan", planFile, ...env, "--yes"]);
      await expect(refused).rejects.toMatchObject({ code: "plan-environment-mismatch", exitCode: 1 });
      await expect(refused).rejects.toThrow(said);
    }
    expect(await counted(staging, STAGING_KEY)).toEqual([]);
    expect(await counted(prod, PROD_KEY)).toEqual([]);
  });

  it("a plan saved without environments is refused where PATH defines them", async () => {
    const flat = await mkdtemp(join(tmpdir(), "plumb-flat-"));
    try {
      await writeFile(
        join(flat, "a.yaml"),
        "apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {source: internal_container, source_revision_config: {image_uri: img/a:1}}\n",
      );
      const flatEnv = { PLUMB_API_URL: staging.url, PLUMB_API_KEY: STAGING_KEY };
      expect((await run(planCommand, [flat, "--out", planFile], flatEnv)).code).toBe(0);
      await expect(run(applyCommand, [dir, "--plan", planFile, "--yes"])).rejects.toMatchObject({
        code: "plan-environment-mismatch",
      });
      // And the reverse: a plan of environments applied to a PATH without them.
      expect((await run(planCommand, [dir, "--out", planFile])).code).toBe(0);
      await expect(run(applyCommand, [flat, "--plan", planFile, "--yes"], flatEnv)).rejects.toMatchObject({
        code: "plan-environment-mismatch",
      });
      expect(await counted(staging, STAGING_KEY)).toEqual([]);
    } finally {
      await rm(flat, { recursive: true, force: true });
    }
  });
});

import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { driftCommand } from "../../src/cli/sync/drift.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { renderCommand } from "../../src/cli/offline/render.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { api } from "../controller/support.js";
import {
  type CommandIo,
  environmentDoc,
  PROD_KEY,
  runCommand,
  STAGING_KEY,
  startTwoPlanes,
} from "./two-planes.js";

// drift --write with environments (docs/drift.md, "With environments"): a value changed live in
// one environment goes into that environment's override (edited in place, or added when the
// base's value is shared), or into the base when every other environment overrides it; every
// other environment renders exactly as before, and the next plan is a no-op. Two control planes.

let staging: RunningControlPlane;
let prod: RunningControlPlane;
let dir: string;

const environment = environmentDoc;

const SUPPORT = `# The support agent: one definition, two environments.
apiVersion: plumb/v1
kind: Deployment
metadata:
  name: support-agent
spec:
  source: internal_container
  source_revision_config:
    image_uri: "img/support:2" # staging runs the next image
environments:
  prod:
    spec:
      # pinned by the release job
      source_revision_config: { image_uri: "img/support:1" }
`;

const DOCS = `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: docs-agent # the same everywhere
spec:
  source: internal_container
  source_revision_config:
    image_uri: img/docs:1
`;

beforeAll(async () => {
  ({ staging, prod } = await startTwoPlanes());
  dir = await mkdtemp(join(tmpdir(), "plumb-env-drift-write-"));
  await mkdir(join(dir, "environments"));
  await writeFile(
    join(dir, "environments", "staging.yaml"),
    environment("staging", "  name_suffix: -staging\n"),
  );
  await writeFile(join(dir, "environments", "prod.yaml"), environment("prod"));
  await writeFile(join(dir, "support-agent.yaml"), SUPPORT);
  await writeFile(join(dir, "docs-agent.yaml"), DOCS);
  expect((await run(applyCommand, [dir, "--yes"])).code).toBe(0);
});
afterAll(async () => {
  await staging?.stop();
  await prod?.stop();
  await rm(dir, { recursive: true, force: true });
});

type Command = typeof planCommand | typeof applyCommand | typeof driftCommand | typeof renderCommand;
async function run(command: Command, args: string[]) {
  const build = (io: CommandIo) =>
    command === renderCommand ? renderCommand(io.stdout, io.stderr) : (command as typeof planCommand)(io);
  return runCommand(build, args, { staging, prod });
}

/** Changes a deployment's image in the UI, as a person would. */
async function changeLive(cp: RunningControlPlane, key: string, name: string, image: string) {
  const client = api(cp.url, key);
  const live = await client.deployment(name);
  await client.call("PATCH", `/v2/deployments/${live.id}`, { source_revision_config: { image_uri: image } });
}

/** Each deployment's number of revisions on a control plane: drift --write sends nothing. */
async function revisions(cp: RunningControlPlane, key: string) {
  const client = api(cp.url, key);
  const counts: Record<string, number> = {};
  for (const d of await client.deployments()) counts[d.name] = (await client.revisions(d.id)).length;
  return counts;
}

describe("drift --write with environments", () => {
  it("a value from prod's override is written into that override; staging renders as before", async () => {
    await changeLive(prod, PROD_KEY, "support-agent", "img/support:1-hotfix");
    const stagingBefore = await run(renderCommand, [dir, "--env", "staging"]);
    const counts = { staging: await revisions(staging, STAGING_KEY), prod: await revisions(prod, PROD_KEY) };
    const result = await run(driftCommand, [dir, "--env", "prod", "--write"]);
    expect(result.code).toBe(2);
    expect(result.out).toContain(
      'wrote support-agent.yaml:14 support-agent source_revision_config.image_uri: "img/support:1" → "img/support:1-hotfix" (into environments.prod.spec.source_revision_config.image_uri)',
    );
    expect(await readFile(join(dir, "support-agent.yaml"), "utf8")).toBe(
      SUPPORT.replace('{ image_uri: "img/support:1" }', '{ image_uri: "img/support:1-hotfix" }'),
    );
    expect((await run(renderCommand, [dir, "--env", "staging"])).out).toBe(stagingBefore.out);
    expect((await run(planCommand, [dir, "--env", "prod", "--detailed-exitcode"])).code).toBe(0);
    expect(await revisions(staging, STAGING_KEY)).toEqual(counts.staging);
    expect(await revisions(prod, PROD_KEY)).toEqual(counts.prod);
  });

  it("a shared base value is written into staging's override (added), the base only where prod overrides it", async () => {
    await changeLive(staging, STAGING_KEY, "docs-agent-staging", "img/docs:2-rc");
    await changeLive(staging, STAGING_KEY, "support-agent-staging", "img/support:2-rc");
    const prodBefore = await run(renderCommand, [dir, "--env", "prod"]);
    const supportBefore = await readFile(join(dir, "support-agent.yaml"), "utf8");
    const result = await run(driftCommand, [dir, "--env", "staging", "--write"]);
    expect(result.code).toBe(2);
    expect(result.out).toContain("(into environments.staging.spec.source_revision_config.image_uri)");
    expect(result.out).toContain("(into spec.source_revision_config.image_uri)");
    // docs-agent's base is prod's value too: staging gets an override of its own, added in place.
    expect(await readFile(join(dir, "docs-agent.yaml"), "utf8")).toBe(
      `${DOCS}environments:\n  staging:\n    spec:\n      source_revision_config:\n        image_uri: img/docs:2-rc\n`,
    );
    // support-agent's base is staging's alone (prod overrides it): edited in place, comment kept.
    expect(await readFile(join(dir, "support-agent.yaml"), "utf8")).toBe(
      supportBefore.replace('"img/support:2" #', '"img/support:2-rc" #'),
    );
    expect((await run(renderCommand, [dir, "--env", "prod"])).out).toBe(prodBefore.out);
    expect((await run(planCommand, [dir, "--detailed-exitcode"])).code).toBe(0);
  });
});

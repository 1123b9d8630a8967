import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { renderCommand } from "../../src/cli/offline/render.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { api } from "../controller/support.js";
import { environmentDoc, PROD_KEY, runCommand, STAGING_KEY, startTwoPlanes } from "./two-planes.js";

// apply over several environments (docs/environments.md, "Order and stopping"): they run in
// promotion order (prod is promoted from staging, so staging first, though "prod" sorts before
// it), and one that does not converge stops the apply before the next: a base change whose build
// fails in staging never reaches prod in the same run. It ran them by name (prod first) and went
// on after a failed one. Staging's real control plane fails the build (an image naming
// `fail-build`); prod's deployments and revisions are counted on its own control plane.

let staging: RunningControlPlane;
let prod: RunningControlPlane;
let dir: string;

const deployment = (image: string) => `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: agent
spec:
  source: internal_container
  source_revision_config: {image_uri: "${image}"}
`;

beforeEach(async () => {
  ({ staging, prod } = await startTwoPlanes());
  dir = await mkdtemp(join(tmpdir(), "plumb-env-apply-order-"));
  await mkdir(join(dir, "environments"));
  await writeFile(join(dir, "environments", "staging.yaml"), environmentDoc("staging"));
  await writeFile(
    join(dir, "environments", "prod.yaml"),
    environmentDoc("prod", "  promotion: {from: staging}\n"),
  );
  await writeFile(join(dir, "agent.yaml"), deployment("img/agent:2-fail-build"));
});
afterEach(async () => {
  await staging?.stop();
  await prod?.stop();
  await rm(dir, { recursive: true, force: true });
});

const run = (command: typeof planCommand | typeof applyCommand, args: string[]) =>
  runCommand(command, args, { staging, prod });

/** Every deployment of a control plane with its number of revisions. */
async function counted(cp: RunningControlPlane, key: string) {
  const client = api(cp.url, key);
  const rows = [];
  for (const d of await client.deployments())
    rows.push({ name: d.name, revisions: (await client.revisions(d.id)).length });
  return rows;
}

const NOT_APPLIED =
  "plumb: environment staging did not converge (exit 1), so prod was not applied (nothing sent there)";

describe("apply over several environments", () => {
  it("without --env: staging first; its failed build stops the apply before prod", async () => {
    const { out, err, code } = await run(applyCommand, [dir, "--yes"]);
    expect(code).toBe(1);
    expect(out).toContain("== environment staging ==");
    expect(out).toContain("BUILD_FAILED");
    expect(out).not.toContain("== environment prod ==");
    expect(err).toContain(NOT_APPLIED);
    expect(err).toContain("--keep-going");
    expect(await counted(prod, PROD_KEY)).toEqual([]);
    expect(await counted(staging, STAGING_KEY)).toEqual([{ name: "agent", revisions: 1 }]);
  });

  it("--env staging --env prod (or the other way round): prod receives nothing", async () => {
    for (const args of [
      ["--env", "staging", "--env", "prod"],
      ["--env", "prod", "--env", "staging"],
    ]) {
      const { out, err, code } = await run(applyCommand, [dir, ...args, "--yes"]);
      expect(code).toBe(1);
      expect(out).not.toContain("== environment prod ==");
      expect(err).toContain(NOT_APPLIED);
    }
    const json = await run(applyCommand, [dir, "--env", "staging", "--env", "prod", "--yes", "-o", "json"]);
    expect(json.code).toBe(1);
    const parsed = JSON.parse(json.out) as {
      environments: Array<{ environment: string; not_applied?: string }>;
    };
    expect(parsed.environments.map((e) => [e.environment, e.not_applied])).toEqual([
      ["staging", undefined],
      ["prod", "staging"],
    ]);
    expect(await counted(prod, PROD_KEY)).toEqual([]);
  });

  it("--keep-going: prod is applied after staging failed, and the exit code still says so", async () => {
    const { out, code } = await run(applyCommand, [dir, "--yes", "--keep-going"]);
    expect(code).toBe(1);
    expect(out.indexOf("== environment staging ==")).toBeLessThan(out.indexOf("== environment prod =="));
    expect(await counted(prod, PROD_KEY)).toEqual([{ name: "agent", revisions: 1 }]);
  });

  it("plan and a converging apply print the environments in promotion order, every one", async () => {
    await writeFile(join(dir, "agent.yaml"), deployment("img/agent:2"));
    for (const command of [planCommand, applyCommand]) {
      const { out, code } = await run(command, [dir, "--yes"].slice(0, command === applyCommand ? 2 : 1));
      expect(code).toBe(0);
      const [first, second] = [
        out.indexOf("== environment staging =="),
        out.indexOf("== environment prod =="),
      ];
      expect(first).toBeGreaterThanOrEqual(0);
      expect(second).toBeGreaterThan(first);
    }
    expect(await counted(prod, PROD_KEY)).toEqual([{ name: "agent", revisions: 1 }]);
  });

  it("render prints them in the same order", async () => {
    let out = "";
    await renderCommand({ write: (t: string) => (out += t) }).parseAsync(
      [dir, "--env", "prod", "--env", "staging"],
      {
        from: "user",
      },
    );
    const [first, second] = [out.indexOf("# environment staging"), out.indexOf("# environment prod")];
    expect(first).toBeGreaterThanOrEqual(0);
    expect(second).toBeGreaterThan(first);
  });
});

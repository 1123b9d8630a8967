import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { driftCommand } from "../../src/cli/sync/drift.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { validateCommand } from "../../src/cli/offline/validate.js";
import { renderCommand } from "../../src/cli/offline/render.js";
import {
  environmentDoc,
  plain,
  runCommand,
  startTwoPlanes,
  STAGING_KEY,
  type TwoPlanes,
} from "./two-planes.js";

// With environments, the manifests are validated (every selected environment's view) before any
// Environment's settings are read and before anything is sent anywhere. Each environment's run read
// its settings first: with a key not set where the command ran, `plan --env staging` said only
// "reads STAGING_API_KEY, which is not set" and hid the broken manifest, and `apply` applied staging
// before it found that prod's override of the same deployment was invalid. Two real control planes;
// what was created is counted on them.

let planes: TwoPlanes;
let dir: string;

/** A repository of staging and prod with agent.yaml holding `agent` (YAML text). */
async function repository(agent: string): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "plumb-validate-first-"));
  await mkdir(join(root, "environments"));
  await writeFile(join(root, "environments", "staging.yaml"), environmentDoc("staging"));
  await writeFile(join(root, "environments", "prod.yaml"), environmentDoc("prod"));
  await writeFile(join(root, "agent.yaml"), agent);
  return root;
}

/** How many deployments a control plane holds (counted there, not in plumb's output). */
async function deploymentsOn(plane: { url: string }, key: string): Promise<number> {
  const response = await fetch(`${plane.url}/v2/deployments`, { headers: { "X-Api-Key": key } });
  const body = (await response.json()) as { resources: unknown[] };
  return body.resources.length;
}

beforeAll(async () => {
  planes = await startTwoPlanes();
});

afterAll(async () => {
  await planes.staging.stop();
  await planes.prod.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("environments: validation errors come first", () => {
  it("a broken manifest is reported, not an environment's unset key", async () => {
    dir = await repository(`${plain("agent")}  labels: [unclosed\n`);
    for (const [build, args] of [
      [planCommand, [dir, "--env", "staging"]],
      [planCommand, [dir]],
      [driftCommand, [dir]],
      [applyCommand, [dir, "--yes"]],
    ] as const) {
      const { out, err, code } = await runCommand(build, [...args], planes, { STAGING_API_KEY: "" });
      expect(code, `${args.join(" ")}: ${err}`).toBe(1);
      expect(out).toMatch(/agent\.yaml:\d+:\d+: error: /);
      expect(out).toContain("nothing was sent to any environment");
      expect(out + err).not.toContain("STAGING_API_KEY");
      expect(out).not.toContain("== environment");
    }
    await rm(dir, { recursive: true, force: true });
  });

  it("apply: an override invalid in prod stops staging too; nothing is created anywhere", async () => {
    dir = await repository(`${plain("agent")}environments:\n  prod:\n    spec:\n      source: gitrepo\n`);
    const { out, code } = await runCommand(applyCommand, [dir, "--yes"], planes);
    expect(code).toBe(1);
    expect(out).toMatch(/agent\.yaml:\d+:\d+: error: /);
    expect(await deploymentsOn(planes.staging, STAGING_KEY)).toBe(0);
    const json = await runCommand(planCommand, [dir, "-o", "json"], planes);
    expect(json.code).toBe(1);
    const problems = JSON.parse(json.out) as unknown;
    expect(JSON.stringify(problems)).toContain("agent.yaml");
  });
});

describe("environments: an Environment document that fails validation", () => {
  it("--env naming it reports its problem, not an unknown environment", async () => {
    dir = await repository(plain("agent"));
    await writeFile(
      join(dir, "environments", "staging.yaml"),
      environmentDoc("staging").replace("kind: Environment", "kind: Environmnt"),
    );
    const problem = /environments\/staging\.yaml:2:7: error: unknown kind "Environmnt"/;
    for (const env of ["staging", "prod"]) {
      const { out, err, code } = await runCommand(planCommand, [dir, "--env", env], planes);
      expect(code, err).toBe(1);
      expect(out).toMatch(problem);
    }
    let out = "";
    process.exitCode = 0;
    await validateCommand({ write: (t: string) => (out += t) }).parseAsync([dir, "--env", "staging"], {
      from: "user",
    });
    expect(process.exitCode).toBe(1);
    process.exitCode = 0;
    expect(out).toMatch(problem);
    let err = "";
    const sink = { write: (t: string) => (err += t) };
    await renderCommand(sink, sink).parseAsync([dir, "--env", "staging"], { from: "user" });
    expect(process.exitCode).toBe(1);
    process.exitCode = 0;
    expect(err).toMatch(problem);
    await rm(dir, { recursive: true, force: true });
  });
});

describe("environments: a settings error among others", () => {
  it("names its environment once", async () => {
    dir = await repository(plain("agent"));
    const { err, code } = await runCommand(planCommand, [dir], planes, { STAGING_API_KEY: "" });
    expect(code).toBe(1);
    expect(err).toContain(
      "plumb: environment staging: spec.api_key (environments/staging.yaml:7) reads STAGING_API_KEY",
    );
    expect(err).not.toContain("environment staging: environment staging");
  });
});

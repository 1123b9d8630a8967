import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importCommand } from "../../src/cli/adopt/import.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { DEFAULT_API_KEY, DEFAULT_INTEGRATION_ID } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { PlumbError } from "../../src/errors.js";

// plumb import --env NAME against two real control planes (staging, names suffixed -staging; prod):
// it reads only NAME's control plane, writes a manifest running only there for each deployment the
// repository does not define (named without the suffix), leaves the defined ones to plan, and what
// it wrote plans as a no-op in NAME.

let staging: RunningControlPlane;
let prod: RunningControlPlane;
let dir: string;

const environment = (name: string, extra: string) => `apiVersion: plumb/v1
kind: Environment
metadata:
  name: ${name}
spec:
  api_url: { env: ${name.toUpperCase()}_API_URL }
  api_key: { env: PLUMB_TEST_KEY }
  mode: saas
${extra}`;

const SUPPORT = `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: support-agent
spec:
  source: gitrepo
  source_config:
    integration_id: ${DEFAULT_INTEGRATION_ID}
    repo_url: https://github.com/acme/support-agent
    deployment_type: dev
  source_revision_config: { repo_ref: main, graph_config_path: langgraph.json }
`;

const gitrepo = (name: string, ref: string) => ({
  name,
  source: "gitrepo",
  source_config: {
    integration_id: DEFAULT_INTEGRATION_ID,
    repo_url: `https://github.com/acme/${name}`,
    deployment_type: "dev",
  },
  source_revision_config: { repo_ref: ref, graph_config_path: "langgraph.json" },
  secrets: [],
});

async function create(plane: RunningControlPlane, body: unknown): Promise<void> {
  const res = await fetch(`${plane.url}/v2/deployments`, {
    method: "POST",
    headers: { "x-api-key": DEFAULT_API_KEY, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
}

async function liveNames(plane: RunningControlPlane): Promise<string[]> {
  const res = await fetch(`${plane.url}/v2/deployments?limit=100`, {
    headers: { "x-api-key": DEFAULT_API_KEY },
  });
  return ((await res.json()) as { resources: Array<{ name: string }> }).resources.map((d) => d.name).sort();
}

function io() {
  let out = "";
  let err = "";
  return {
    stdout: { write: (t: string) => (out += t), isTTY: false },
    stderr: { write: (t: string) => (err += t) },
    stdin: { isTTY: false },
    env: {
      STAGING_API_URL: staging.url,
      PROD_API_URL: prod.url,
      PLUMB_TEST_KEY: DEFAULT_API_KEY,
      // Not used with environments: each reads its Environment's control plane.
      PLUMB_API_URL: "http://127.0.0.1:9",
      NO_COLOR: "1",
    },
    signals: { once: () => process, removeListener: () => process },
    out: () => out,
    err: () => err,
  };
}

async function run(command: typeof importCommand | typeof planCommand, args: string[]) {
  const captured = io();
  process.exitCode = 0;
  await command(captured).parseAsync(args, { from: "user" });
  const code = process.exitCode;
  process.exitCode = 0;
  return { code, out: captured.out(), err: captured.err() };
}

beforeAll(async () => {
  staging = await startControlPlane({ port: 0, revisionSeconds: 0, deploymentReadySeconds: 0 });
  prod = await startControlPlane({ port: 0, revisionSeconds: 0, deploymentReadySeconds: 0 });
  dir = await mkdtemp(join(tmpdir(), "plumb-import-env-"));
  await mkdir(join(dir, "environments"));
  await writeFile(
    join(dir, "environments", "staging.yaml"),
    environment("staging", "  name_suffix: -staging\n  defaults:\n    labels: { tier: staging }\n"),
  );
  await writeFile(
    join(dir, "environments", "prod.yaml"),
    environment("prod", "  defaults:\n    spec:\n      source_config: { build_on_push: false }\n"),
  );
  await writeFile(join(dir, "support-agent.yaml"), SUPPORT);
  await create(staging, gitrepo("support-agent-staging", "develop")); // defined in the repository
  await create(staging, gitrepo("hotfix-agent-staging", "refs/tags/v2.0.1")); // made by hand in staging
  await create(staging, gitrepo("scratch", "main")); // no -staging suffix: not staging's
  await create(prod, gitrepo("billing-agent", "refs/tags/v3.8.0")); // made by hand in prod
}, 60_000);
afterAll(async () => {
  await staging?.stop();
  await prod?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("plumb import --env", () => {
  it("writes what only the environment's control plane has, running only there, as a no-op plan", async () => {
    const before = { staging: await liveNames(staging), prod: await liveNames(prod) };
    const imported = await run(importCommand, ["--out", dir, "--env", "staging"]);
    expect(imported.code, imported.err).toBe(0);
    expect(imported.out).toContain("== environment staging ==");
    expect(imported.out).toMatch(
      /skipped support-agent-staging: support-agent is already defined at support-agent\.yaml:2/,
    );
    expect(imported.out).toMatch(
      /skipped scratch: its name lacks environment staging's name_suffix -staging/,
    );
    expect((await readdir(dir)).filter((f) => f.endsWith(".yaml")).sort()).toEqual([
      "hotfix-agent.yaml",
      "support-agent.yaml",
    ]);
    const written = await readFile(join(dir, "hotfix-agent.yaml"), "utf8");
    expect(written).toMatch(/name: hotfix-agent\n\s+environments:\n\s+- staging\n/);
    expect(written).toContain("repo_ref: refs/tags/v2.0.1");
    // Read-only: neither control plane changed.
    expect({ staging: await liveNames(staging), prod: await liveNames(prod) }).toEqual(before);

    // In staging the new manifest plans as a no-op, and prod does not run it.
    const plan = await run(planCommand, [
      dir,
      "--env",
      "staging",
      "--target",
      "hotfix-agent",
      "--output",
      "json",
    ]);
    const stagingPlan = (
      JSON.parse(plan.out) as { environments: Array<{ changes: Array<{ name: string; action: string }> }> }
    ).environments[0]!;
    expect(stagingPlan.changes).toEqual([
      expect.objectContaining({ name: "hotfix-agent-staging", action: "noop" }),
    ]);
    const rendered = await run(planCommand, [dir, "--env", "prod", "--output", "json"]);
    expect(rendered.out).not.toContain("hotfix-agent");
  }, 60_000);

  it("notes where the environment's defaults would change what it imported", async () => {
    const imported = await run(importCommand, ["--out", dir, "--env", "prod", "--name", "billing-agent"]);
    expect(imported.code, imported.err).toBe(0);
    expect(imported.out).toContain("environment prod's defaults also set spec.source_config");
    expect(await readFile(join(dir, "billing-agent.yaml"), "utf8")).toMatch(/environments:\n\s+- prod\n/);
  }, 60_000);

  it("with --adopt records the secrets in the environment's own store: the first plan there is a no-op", async () => {
    await create(staging, {
      ...gitrepo("adopted-agent-staging", "refs/tags/v1.0.0"),
      secrets: [{ name: "API_TOKEN", value: "live-token" }],
    });
    const captured = io();
    captured.env = { ...captured.env, API_TOKEN: "live-token" } as typeof captured.env;
    process.exitCode = 0;
    await importCommand(captured).parseAsync(
      ["--out", dir, "--env", "staging", "--name", "adopted-agent-staging", "--adopt"],
      {
        from: "user",
      },
    );
    expect(process.exitCode, captured.err()).toBe(0);
    expect(await readdir(join(dir, ".plumb", "status", "staging"))).toContain(
      "deployment.adopted-agent-staging.json",
    );
    const planned = io();
    planned.env = { ...planned.env, API_TOKEN: "live-token" } as typeof planned.env;
    process.exitCode = 0;
    await planCommand(planned).parseAsync(
      [dir, "--env", "staging", "--target", "adopted-agent", "--output", "json"],
      {
        from: "user",
      },
    );
    process.exitCode = 0;
    const plan = JSON.parse(planned.out()) as { environments: Array<{ changes: Array<{ action: string }> }> };
    expect(plan.environments[0]!.changes.map((c) => c.action)).toEqual(["noop"]);
  }, 60_000);

  it("refuses a repository with environments without --env, and --env twice", async () => {
    await expect(run(importCommand, ["--out", dir])).rejects.toSatisfy(
      (e) =>
        e instanceof PlumbError &&
        e.exitCode === 64 &&
        /defines environments \(prod, staging\)|defines environments/.test(e.message),
    );
    await expect(run(importCommand, ["--out", dir, "--env", "staging", "--env", "prod"])).rejects.toSatisfy(
      (e) => e instanceof PlumbError && e.exitCode === 64,
    );
  });
});

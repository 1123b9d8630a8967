import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { renderCommand } from "../../src/cli/offline/render.js";
import { DEFAULT_TENANT_ID } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { TEST_POLL } from "./reconcile-helpers.js";

// One definition, two environments, two real control planes (staging and prod, each on a free
// loopback port with its own API key): apply reaches each with its own client, the override
// differs, and each control plane is counted.

const STAGING_KEY = "staging-key-0123456789abcdef";
const PROD_KEY = "prod-key-0123456789abcdef0123";

let staging: RunningControlPlane;
let prod: RunningControlPlane;
let dir: string;

const environment = (name: string, url: string, key: string, extra = "") => `apiVersion: plumb/v1
kind: Environment
metadata:
  name: ${name}
spec:
  api_url: ${url}
  api_key: ${key}
  mode: saas
${extra}`;

const DEPLOYMENT = `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: support-agent
spec:
  source: gitrepo
  source_config:
    integration_id: 20000000-0000-4000-8000-000000000001
    repo_url: https://github.com/acme/support-agent
    deployment_type: dev
  source_revision_config:
    repo_ref: main
    graph_config_path: langgraph.json
  secrets:
    - name: LOG_LEVEL
      value: info
environments:
  prod:
    spec:
      source_config: {deployment_type: prod}
      source_revision_config: {repo_ref: v1.4.2}
`;

const ONLY_STAGING = `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: triage-agent
  environments: [staging]
spec:
  source: gitrepo
  source_config:
    integration_id: 20000000-0000-4000-8000-000000000001
    repo_url: https://github.com/acme/triage-agent
    deployment_type: dev
  source_revision_config: {repo_ref: main, graph_config_path: langgraph.json}
`;

beforeAll(async () => {
  const grant = (key: string) => ({ apiKeys: [{ key, tenants: [DEFAULT_TENANT_ID] }] });
  staging = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0, ...grant(STAGING_KEY) });
  prod = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0, ...grant(PROD_KEY) });
  dir = await mkdtemp(join(tmpdir(), "plumb-environments-"));
  await mkdir(join(dir, "environments"));
  await writeFile(join(dir, "environments", "prod.key"), `${PROD_KEY}\n`);
  await writeFile(
    join(dir, "environments", "staging.yaml"),
    environment(
      "staging",
      "{env: STAGING_API_URL}",
      "{env: STAGING_API_KEY}",
      "  defaults:\n    labels: {tier: staging}\n",
    ),
  );
  await writeFile(join(dir, "environments", "prod.yaml"), environment("prod", prod.url, "{file: prod.key}"));
  await writeFile(join(dir, "support-agent.yaml"), DEPLOYMENT);
  await writeFile(join(dir, "triage-agent.yaml"), ONLY_STAGING);
});
afterAll(async () => {
  await staging?.stop();
  await prod?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function run(command: typeof planCommand | typeof applyCommand | typeof renderCommand, args: string[]) {
  let out = "";
  let err = "";
  process.exitCode = 0;
  const io = {
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t) },
    // PLUMB_API_URL points nowhere useful: each environment must use its own settings.
    env: { STAGING_API_URL: staging.url, STAGING_API_KEY: STAGING_KEY, PLUMB_API_URL: "http://127.0.0.1:9" },
    poll: TEST_POLL,
  };
  const cmd =
    command === renderCommand ? renderCommand(io.stdout, io.stderr) : (command as typeof planCommand)(io);
  await cmd.parseAsync(args, { from: "user" });
  const code = process.exitCode;
  process.exitCode = 0;
  return { out, err, code };
}

type Listed = {
  name: string;
  source_revision_config?: { repo_ref?: string };
  source_config?: Record<string, unknown>;
};
async function deploymentsOn(cp: RunningControlPlane, key: string): Promise<Listed[]> {
  const res = await fetch(`${cp.url}/v2/deployments`, { headers: { "x-api-key": key } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { resources: Listed[] }).resources;
}

describe("--env with two control planes", () => {
  it("render prints each environment's resolved Deployment", async () => {
    const result = await run(renderCommand, [dir, "--env", "prod", "--target", "support-agent"]);
    expect(result.code).toBe(0);
    expect(result.out).toContain("# environment prod, from support-agent.yaml:2");
    expect(result.out).toContain("repo_ref: v1.4.2");
    expect(result.out).not.toContain("environments");
  });

  it("plan groups by environment; JSON marks each change with its environment", async () => {
    const text = await run(planCommand, [dir]);
    expect(text.code).toBe(0);
    expect(text.out.indexOf("== environment prod ==")).toBeGreaterThanOrEqual(0);
    expect(text.out.indexOf("== environment staging ==")).toBeGreaterThan(
      text.out.indexOf("== environment prod =="),
    );
    const markdown = await run(planCommand, [dir, "--env", "prod", "--output", "markdown"]);
    expect(markdown.out.startsWith("## Environment prod\n\n")).toBe(true);
    const json = await run(planCommand, [dir, "--env", "staging", "--output", "json"]);
    const parsed = JSON.parse(json.out) as {
      environments: Array<{ environment: string; changes: Array<{ name: string; environment: string }> }>;
    };
    expect(parsed.environments.map((e) => e.environment)).toEqual(["staging"]);
    expect(parsed.environments[0]!.changes.map((c) => `${c.environment}/${c.name}`).sort()).toEqual([
      "staging/support-agent",
      "staging/triage-agent",
    ]);
  });

  it("apply sends one definition to both, the override differing, counted on each control plane", async () => {
    const result = await run(applyCommand, [dir, "--yes"]);
    expect(result.err).toBe("");
    expect(result.code).toBe(0);
    const onStaging = await deploymentsOn(staging, STAGING_KEY);
    const onProd = await deploymentsOn(prod, PROD_KEY);
    expect(onStaging.map((d) => d.name).sort()).toEqual(["support-agent", "triage-agent"]);
    expect(onProd.map((d) => d.name)).toEqual(["support-agent"]);
    const ref = (list: Listed[]) =>
      list.find((d) => d.name === "support-agent")?.source_revision_config?.repo_ref;
    expect(ref(onStaging)).toBe("main");
    expect(ref(onProd)).toBe("v1.4.2");
    // Each environment keeps its own status store.
    expect((await readdir(join(dir, ".plumb", "status"))).sort()).toEqual(["prod", "staging"]);
    // Nothing left to do in either: the next plan is a no-op per environment.
    const again = await run(planCommand, [dir, "--detailed-exitcode"]);
    expect(again.code).toBe(0);
  });

  it("--env runs only the environments named; an unknown one is a usage error", async () => {
    const result = await run(planCommand, [dir, "--env", "prod"]);
    expect(result.out).toContain("== environment prod ==");
    expect(result.out).not.toContain("staging");
    await expect(run(planCommand, [dir, "--env", "qa"])).rejects.toThrow(
      /unknown environment "qa" in --env; defined: prod, staging/,
    );
  });

  it("drift --env checks each environment against its own control plane", async () => {
    const { driftCommand } = await import("../../src/cli/sync/drift.js");
    const onProd = await deploymentsOn(prod, PROD_KEY);
    const id = (onProd.find((d) => d.name === "support-agent") as { id?: string } | undefined)?.id;
    // Someone changes prod in the UI: only prod drifts.
    const patched = await fetch(`${prod.url}/v2/deployments/${id}`, {
      method: "PATCH",
      headers: { "x-api-key": PROD_KEY, "content-type": "application/json" },
      body: JSON.stringify({ source_revision_config: { repo_ref: "hotfix" } }),
    });
    expect(patched.status).toBe(200);
    expect((await run(driftCommand, [dir, "--env", "staging"])).code).toBe(0);
    const drift = await run(driftCommand, [dir]);
    expect(drift.code).toBe(2);
    expect(drift.out).toContain("== environment prod ==");
    expect(drift.out).toContain("hotfix");
  });

  it("status --env refreshes each environment's own records against its control plane", async () => {
    const { statusCommand } = await import("../../src/cli/sync/status.js");
    const result = await run(statusCommand, [dir, "--output", "json"]);
    expect(result.code).toBe(0);
    const parsed = JSON.parse(result.out) as {
      environments: Array<{ environment: string; objects: Array<{ name: string; environment: string }> }>;
    };
    const names = parsed.environments.flatMap((e) => e.objects.map((o) => `${o.environment}/${o.name}`));
    expect(names.sort()).toEqual(["prod/support-agent", "staging/support-agent", "staging/triage-agent"]);
  });

  it("a refused change points at the override's line that wrote it", async () => {
    const changed = DEPLOYMENT.replace(
      "source_config: {deployment_type: prod}",
      "source_config: {deployment_type: dev}",
    );
    await writeFile(join(dir, "support-agent.yaml"), changed);
    try {
      const result = await run(planCommand, [dir, "--env", "prod"]);
      expect(result.code).toBe(1);
      expect(result.out).toMatch(/deployment_type cannot change after creation .* at support-agent\.yaml:20/);
    } finally {
      await writeFile(join(dir, "support-agent.yaml"), DEPLOYMENT);
    }
  });

  it("adopt --env records what one environment's control plane already runs", async () => {
    const { adoptCommand } = await import("../../src/cli/adopt/adopt.js");
    await rm(join(dir, ".plumb", "status", "prod"), { recursive: true, force: true });
    const result = await run(adoptCommand, [dir, "--env", "prod", "--yes"]);
    expect(result.code).toBe(0);
    expect(result.out).toContain("== environment prod ==");
    expect(
      (await readdir(join(dir, ".plumb", "status", "prod"))).some((f) => f.includes("support-agent")),
    ).toBe(true);
    expect(result.out).toContain("1 recorded");
  });

  it("unlock --env names each environment's own store", async () => {
    const { unlockCommand } = await import("../../src/cli/sync/unlock.js");
    const result = await run(unlockCommand, [dir, "--env", "staging"]);
    expect(result.code).toBe(0);
    expect(result.out).toContain(
      `The status store ${join(dir, ".plumb", "status", "staging")} is not locked.`,
    );
  });

  it("diff --env shows prod's live change against its resolved manifest", async () => {
    const { diffCommand } = await import("../../src/cli/sync/diff.js");
    const result = await run(diffCommand, [dir, "--env", "prod", "--detailed-exitcode"]);
    expect(result.code).toBe(2);
    expect(result.out).toContain("== environment prod ==");
    expect(result.out).toMatch(/-\s*repo_ref: hotfix/);
    expect(result.out).toMatch(/\+\s*repo_ref: v1\.4\.2/);
  });
});

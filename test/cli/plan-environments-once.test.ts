import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { planCommand } from "../../src/cli/sync/plan.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import type { LoadResult } from "../../src/manifest/load.js";

// plumb plan over two environments reads the tree once: the lookup of its Environment documents and
// each environment's plan take the same parse from the command's loads (loadManifestsOnce).

let cp: RunningControlPlane;
let dir: string;

const environment = (name: string, suffix: string) => `apiVersion: plumb/v1
kind: Environment
metadata:
  name: ${name}
spec:
  api_url: {env: CP_URL}
  api_key: {env: CP_KEY}
  mode: saas
  name_suffix: ${suffix}
`;

beforeAll(async () => {
  cp = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
  dir = await mkdtemp(join(tmpdir(), "plumb-plan-once-"));
  await writeFile(join(dir, "staging.yaml"), environment("staging", "-staging"));
  await writeFile(join(dir, "prod.yaml"), environment("prod", "-prod"));
  await writeFile(
    join(dir, "agent.yaml"),
    `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: agent
spec:
  source: gitrepo
  source_config:
    integration_id: 20000000-0000-4000-8000-000000000001
    repo_url: https://github.com/acme/agent
    deployment_type: dev
  source_revision_config: {repo_ref: main, graph_config_path: langgraph.json}
`,
  );
});
afterAll(async () => {
  await cp?.stop();
  await rm(dir, { recursive: true, force: true });
});

/**
 * A map of loads that counts the parses behind its entries: each loadManifests gives a result of its
 * own, so distinct results are parses (an entry may reuse another's: loadManifestsOnce).
 */
class CountingLoads extends Map<string, Promise<LoadResult>> {
  private readonly settled: Array<Promise<LoadResult>> = [];
  override set(key: string, value: Promise<LoadResult>) {
    this.settled.push(value);
    return super.set(key, value);
  }
  async parses(): Promise<number> {
    return new Set(await Promise.all(this.settled)).size;
  }
}

/** `plumb plan PATH --output json` in this process with `loads`; its JSON and the loads' counts. */
async function planJson(path: string, env: Record<string, string>, args: string[] = []) {
  const loads = new CountingLoads();
  let out = "";
  process.exitCode = 0;
  await planCommand({
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: () => true },
    env,
    manifestLoads: loads,
  }).parseAsync([path, "--output", "json", ...args], { from: "user" });
  process.exitCode = 0;
  return { json: JSON.parse(out) as Record<string, unknown>, loads };
}

it("parses the tree once for the Environment lookup and every environment's plan", async () => {
  const { json, loads } = await planJson(dir, { CP_URL: cp.url, CP_KEY: DEFAULT_API_KEY });
  const planned = (json as { environments: Array<{ environment: string; summary: object }> }).environments;
  expect(planned.map((e) => [e.environment, e.summary])).toEqual([
    ["prod", expect.objectContaining({ create: 1 })],
    ["staging", expect.objectContaining({ create: 1 })],
  ]);
  expect(await loads.parses()).toBe(1);
});

it("a tree without environments is parsed once too, and not scanned as text before", async () => {
  const plain = await mkdtemp(join(tmpdir(), "plumb-plan-once-plain-"));
  try {
    await writeFile(join(plain, "agent.yaml"), await readFile(join(dir, "agent.yaml"), "utf8"));
    const { json, loads } = await planJson(plain, { PLUMB_API_URL: cp.url, PLUMB_API_KEY: DEFAULT_API_KEY });
    expect(json.summary).toEqual(expect.objectContaining({ create: 1 }));
    // The environments' lookup took the load and the plan reused it: one parse.
    expect(await loads.parses()).toBe(1);
  } finally {
    await rm(plain, { recursive: true, force: true });
  }
});

it("a directory whose manifests name no environment, run with --env and those above it, is parsed once", async () => {
  const repo = await mkdtemp(join(tmpdir(), "plumb-plan-once-above-"));
  try {
    execFileSync("git", ["init", "-q", repo]);
    await writeFile(join(repo, "staging.yaml"), environment("staging", "-staging"));
    await mkdir(join(repo, "team"));
    await writeFile(join(repo, "team", "agent.yaml"), await readFile(join(dir, "agent.yaml"), "utf8"));
    const env = { CP_URL: cp.url, CP_KEY: DEFAULT_API_KEY };
    const { json, loads } = await planJson(join(repo, "team"), env, ["--env", "staging"]);
    const planned = (json as { environments: Array<{ environment: string; summary: object }> }).environments;
    expect(planned.map((e) => [e.environment, e.summary])).toEqual([
      ["staging", expect.objectContaining({ create: 1 })],
    ]);
    expect(await loads.parses()).toBe(1);
  } finally {
    await rm(repo, { recursive: true, force: true });
  }
});

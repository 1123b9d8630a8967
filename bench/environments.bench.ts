import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { planCommand } from "../src/cli/sync/plan.js";
import { DEFAULT_API_KEY } from "../src/control-plane/options.js";
import { baselineRatio } from "./baseline.js";
import {
  buildEnvironmentsTree,
  ENVIRONMENTS,
  type EnvironmentsTree,
  urlOf,
} from "./environments-fixtures.js";

// `plumb plan` of 3 environments × 1,000 deployments (issue 26: under 3 s), against the same
// 3,000 plans without environments measured in the same run: each environment's deployments as
// plain manifests, planned by three runs of `plumb plan` with PLUMB_API_URL. The difference is
// what environments cost: loading the Environment documents, resolving each deployment per
// environment (merge, validate again), and one session per environment.

const COUNT = 1000;
const TARGET_MS = 3000;

type Summary = Record<string, number>;
type Run = { ms: number; requests: number; summaries: Summary[] };

async function plan(path: string, env: NodeJS.ProcessEnv): Promise<{ out: string; requests: number }> {
  let out = "";
  let requests = 0;
  const counting: typeof fetch = (input, init) => {
    requests += 1;
    return fetch(input, init);
  };
  process.exitCode = 0;
  await planCommand({
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: () => true },
    env,
    fetch: counting,
  }).parseAsync([path, "--output", "json"], { from: "user" });
  process.exitCode = 0;
  return { out, requests };
}

/** The three environments in one run of `plumb plan` (every environment by default). */
async function withEnvironments(tree: EnvironmentsTree): Promise<Run> {
  const started = performance.now();
  const { out, requests } = await plan(tree.dir, tree.env);
  const ms = performance.now() - started;
  const summaries = (JSON.parse(out) as { environments: Array<{ summary: Summary }> }).environments.map(
    (e) => e.summary,
  );
  return { ms, requests, summaries };
}

/** The same 3,000 plans without environments: one run per environment's plain tree. */
async function withoutEnvironments(tree: EnvironmentsTree): Promise<Run> {
  const started = performance.now();
  let requests = 0;
  const summaries: Summary[] = [];
  for (const env of ENVIRONMENTS) {
    const one = await plan(tree.flat[env], {
      PLUMB_API_URL: urlOf(tree, env),
      PLUMB_API_KEY: DEFAULT_API_KEY,
    });
    requests += one.requests;
    summaries.push((JSON.parse(one.out) as { summary: Summary }).summary);
  }
  return { ms: performance.now() - started, requests, summaries };
}

export async function run(): Promise<string[]> {
  const root = await mkdtemp(join(tmpdir(), "plumb-environments-bench-"));
  const tree = await buildEnvironmentsTree(root, COUNT);
  try {
    // Alternated, twice each; the faster of each kept (the first runs warm the JIT for both).
    const runs: { with: Run[]; without: Run[] } = { with: [], without: [] };
    for (let round = 0; round < 2; round++) {
      runs.without.push(await withoutEnvironments(tree));
      runs.with.push(await withEnvironments(tree));
    }
    const best = (list: Run[]) => list.reduce((a, b) => (b.ms < a.ms ? b : a));
    const envs = best(runs.with);
    const flat = best(runs.without);
    const same = JSON.stringify(envs.summaries) === JSON.stringify(flat.summaries);
    return [
      `plan ${ENVIRONMENTS.length} environments × ${COUNT} deployments: ${envs.ms.toFixed(0)} ms ${await baselineRatio(envs.ms)} (target < ${TARGET_MS} ms) ${envs.ms < TARGET_MS ? "OK" : "SLOW"}, ${envs.requests} API requests`,
      `  the same ${ENVIRONMENTS.length * COUNT} plans without environments (three plain trees, three runs): ${flat.ms.toFixed(0)} ms, ${flat.requests} API requests; environments cost ${(envs.ms / flat.ms).toFixed(2)}x`,
      `  runs (ms): with ${runs.with.map((r) => r.ms.toFixed(0)).join(", ")}; without ${runs.without.map((r) => r.ms.toFixed(0)).join(", ")}`,
      `  summaries per environment ${same ? "equal" : "DIFFER"}: ${JSON.stringify(envs.summaries)}`,
    ];
  } finally {
    await tree.stop();
    await rm(root, { recursive: true, force: true });
  }
}

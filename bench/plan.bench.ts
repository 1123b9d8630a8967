import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pLimit from "p-limit";
import { createControlPlaneClient } from "../src/api/control-plane-client.js";
import { createRateLimiter } from "../src/api/transport/rate-limiter.js";
import { systemClock } from "../src/clock.js";
import { planCommand } from "../src/cli/sync/plan.js";
import { DEFAULT_API_KEY, DEFAULT_INTEGRATION_ID } from "../src/control-plane/options.js";
import { startControlPlane } from "../src/control-plane/server.js";
import { createDerivations, processDerivations } from "../src/diff/secrets/scrypt-derivations.js";
import { fingerprintSecretsAsync, type SecretOrigin } from "../src/diff/secrets/secret-fingerprint.js";
import { baselineRatio } from "./baseline.js";

// `plumb plan` over 1,000 deployments against the local control plane: wall time and API requests.
// Every deployment has two secrets with recorded fingerprints, one from the environment and one
// literal (issue 28's case); 10% have changes. Planned twice: with records as apply writes them
// (the env value under its source's shared salt, derived once; the literal an HMAC), and with
// records as plumb wrote them before (per-object salt and `set`: one scrypt per deployment).

const COUNT = 1000;
const TARGET_MS = 1500;
const TARGET_REQUESTS = 11;
/** The value of every deployment's TOKEN secret, from the environment (valueFrom: {env: BENCH_TOKEN}). */
const TOKEN = "token-shared-by-all";
/** What apply knows from the manifest below (secretOriginsOf). */
const ORIGINS = new Map<string, SecretOrigin>([
  ["TOKEN", { source: "env\0BENCH_TOKEN" }],
  ["DB_PASSWORD", { literal: true }],
]);

const body = (i: number) => ({
  name: `bench-${i}`,
  source: "gitrepo" as const,
  source_config: {
    integration_id: DEFAULT_INTEGRATION_ID,
    repo_url: `https://github.com/acme/bench-${i}`,
    deployment_type: "dev" as const,
    build_on_push: false,
  },
  source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
  secrets: [
    { name: "TOKEN", value: TOKEN },
    { name: "DB_PASSWORD", value: `db-${i}` },
  ],
});

const manifest = (i: number) => `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: bench-${i}
spec:
  source: gitrepo
  source_config:
    integration_id: ${DEFAULT_INTEGRATION_ID}
    repo_url: https://github.com/acme/bench-${i}
    deployment_type: dev
    build_on_push: false
  source_revision_config:
    repo_ref: ${i % 10 === 0 ? "release" : "main"}
    graph_config_path: langgraph.json
  secrets:
    - name: TOKEN
      valueFrom: {env: BENCH_TOKEN}
    - name: DB_PASSWORD
      value: db-${i}
`;

export async function run(): Promise<string[]> {
  const server = await startControlPlane({
    revisionSeconds: 0,
    deploymentReadySeconds: 0,
    rateLimits: { "Default (API key)": { count: 1_000_000, intervalSeconds: 10 } },
  });
  const dir = await mkdtemp(join(tmpdir(), "plumb-plan-bench-"));
  try {
    // Seeding is not measured: a generous limiter so it does not wait on the spec's budget.
    const seeder = createControlPlaneClient({
      apiUrl: server.url,
      apiKey: DEFAULT_API_KEY,
      limiter: createRateLimiter({
        clock: systemClock,
        categorize: () => ({ name: "seed", limit: 1_000_000, windowMs: 10_000 }),
        maxConcurrency: 32,
      }),
    });
    const limit = pLimit(32);
    const created = await Promise.all(
      Array.from({ length: COUNT }, (_, i) => limit(() => seeder.createDeployment(body(i)))),
    );
    const statusDir = join(dir, ".plumb", "status");
    await mkdir(statusDir, { recursive: true });
    await Promise.all(created.map((_, i) => writeFile(join(dir, `bench-${i}.yaml`), manifest(i))));
    const seeding = createDerivations();
    const writeRecords = (origins: typeof ORIGINS | undefined) =>
      Promise.all(
        created.map(async (deployment, i) => {
          const secrets = [
            { name: "TOKEN", value: TOKEN },
            { name: "DB_PASSWORD", value: `db-${i}` },
          ];
          const record = {
            kind: "Deployment",
            name: deployment.name,
            id: deployment.id,
            latest_revision_id: deployment.latest_revision_id,
            active_revision_id: null,
            revision_status: null,
            sync: "Synced",
            health: "Healthy",
            git_commit: null,
            manifest_digest: null,
            // A memo of its own: the plan finds none of the seeding's derivations in the process's memo.
            secret_fingerprints: await fingerprintSecretsAsync(secrets, undefined, origins, seeding),
            updated_at: new Date().toISOString(),
            last_error: null,
          };
          await writeFile(join(statusDir, `deployment.${deployment.name}.json`), JSON.stringify(record));
        }),
      );

    await writeRecords(ORIGINS);
    const now = await planOnce(server.url, dir);
    await writeRecords(undefined);
    const before = await planOnce(server.url, dir);
    const { ms, requests, phases } = now;
    return [
      `plan ${COUNT} deployments: ${ms.toFixed(0)} ms ${await baselineRatio(ms)} (target < ${TARGET_MS} ms) ${ms < TARGET_MS ? "OK" : "SLOW"}, ${now.derived} scrypt derivations`,
      `API requests: ${requests} (target ≤ ${TARGET_REQUESTS}) ${requests <= TARGET_REQUESTS ? "OK" : "TOO MANY"}`,
      `where the time goes: ${phases}`,
      `summary: ${JSON.stringify(now.summary)}`,
      `with records written before (per-object salt and set): ${before.ms.toFixed(0)} ms ${await baselineRatio(before.ms)}, ${before.derived} scrypt derivations; ${before.phases}; summary ${JSON.stringify(before.summary) === JSON.stringify(now.summary) ? "the same" : `DIFFERS ${JSON.stringify(before.summary)}`}`,
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
    await server.stop();
  }
}

/** One `plumb plan --output json` of `dir`, timed, with its API requests and scrypt derivations counted. */
async function planOnce(url: string, dir: string) {
  let requests = 0;
  let out = "";
  const counting: typeof fetch = (input, init) => {
    requests += 1;
    return fetch(input, init);
  };
  const derivedBefore = processDerivations.count;
  const started = performance.now();
  process.exitCode = 0;
  await planCommand({
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: () => true },
    env: { PLUMB_API_URL: url, PLUMB_API_KEY: DEFAULT_API_KEY, BENCH_TOKEN: TOKEN },
    fetch: counting,
  }).parseAsync([dir, "--output", "json"], { from: "user" });
  const ms = performance.now() - started;
  process.exitCode = 0;
  const summary = (JSON.parse(out) as { summary: Record<string, number> }).summary;
  const at = (phase: string) =>
    performance.getEntriesByName(`plumb:plan:${phase}`, "mark")[0]?.startTime ?? NaN;
  const span = (from: string, to: string) => `${(at(to) - at(from)).toFixed(0)} ms`;
  const phases = `session and status store ${(at("start") - started).toFixed(0)} ms, loading (read, parse, validate, resolve secrets) ${span("start", "loaded")}, then in parallel live reads ${span("loaded", "live-read")} and secret fingerprint checks ${span("loaded", "fingerprints-checked")}, records and diff ${span("fingerprints-checked", "built")}, formatting ${span("built", "formatted")}`;
  return { ms, requests, summary, phases, derived: processDerivations.count - derivedBefore };
}

import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import pLimit from "p-limit";
import { createControlPlaneClient } from "../src/api/control-plane-client.js";
import { createRateLimiter } from "../src/api/transport/rate-limiter.js";
import { systemClock } from "../src/clock.js";
import { DEFAULT_API_KEY, DEFAULT_INTEGRATION_ID } from "../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../src/control-plane/server.js";
import { createDerivations } from "../src/diff/secrets/scrypt-derivations.js";
import { fingerprintSecretsAsync } from "../src/diff/secrets/secret-fingerprint.js";

// The environments benches' tree, as examples/ is shaped: staging and prod on one hosted control
// plane (staging's names suffixed -staging), onprem on a second one; COUNT Deployment files, each
// with a staging and a prod override. Seeded live as each environment resolves them, with status
// records (one literal secret's fingerprint each, as apply writes it), so every plan reads and
// checks everything; 10% of each environment's deployments differ from live.

export const ENVIRONMENTS = ["staging", "prod", "onprem"] as const;
export type EnvironmentName = (typeof ENVIRONMENTS)[number];

const SUFFIX: Record<EnvironmentName, string> = { staging: "-staging", prod: "", onprem: "" };

/** The repo_ref each environment resolves deployment i to (the manifests'), or live's when `live`. */
function refOf(env: EnvironmentName, i: number, live: boolean): string {
  const ref = env === "staging" ? "refs/tags/v2.0.0" : env === "prod" ? "refs/tags/v1.9.0" : "main";
  return live && i % 10 === 0 ? "refs/tags/v1.0.0" : ref;
}

const secret = (i: number) => ({ name: "TOKEN", value: `token-${i}` });
/** The secret is a literal `value:`: apply records it so (secretOriginsOf), as the records here are. */
const ORIGINS = new Map([["TOKEN", { literal: true as const }]]);

function manifest(i: number): string {
  return `apiVersion: plumb/v1
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
    repo_ref: main
    graph_config_path: langgraph.json
  secrets:
    - name: TOKEN
      value: token-${i}
environments:
  staging:
    spec:
      source_revision_config: { repo_ref: ${refOf("staging", i, false)} }
  prod:
    spec:
      source_revision_config: { repo_ref: ${refOf("prod", i, false)} }
`;
}

/** The same deployment as a plain manifest: what `env` resolves it to (the baseline's tree). */
function resolvedManifest(env: EnvironmentName, i: number): string {
  return manifest(i)
    .replace(/\nenvironments:[\s\S]*$/, "\n")
    .replace(`name: bench-${i}\n`, `name: bench-${i}${SUFFIX[env]}\n`)
    .replace("repo_ref: main", `repo_ref: ${refOf(env, i, false)}`);
}

function environment(name: EnvironmentName): string {
  const plane = name === "onprem" ? "ONPREM" : "SAAS";
  return `apiVersion: plumb/v1
kind: Environment
metadata:
  name: ${name}
spec:
  api_url: { env: ${plane}_API_URL }
  api_key: { env: ${plane}_API_KEY }
  mode: saas
${name === "staging" ? "  name_suffix: -staging\n" : ""}`;
}

export type EnvironmentsTree = {
  hosted: RunningControlPlane;
  onprem: RunningControlPlane;
  /** The repository with environments. */
  dir: string;
  /** Per environment, the same deployments as plain manifests (what it resolves them to). */
  flat: Record<EnvironmentName, string>;
  env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
};

/** Starts the two control planes, seeds them and writes both trees under `root`. */
export async function buildEnvironmentsTree(root: string, count: number): Promise<EnvironmentsTree> {
  const options = {
    revisionSeconds: 0,
    deploymentReadySeconds: 0,
    rateLimits: { "Default (API key)": { count: 1_000_000, intervalSeconds: 10 } },
  };
  const hosted = await startControlPlane(options);
  const onprem = await startControlPlane(options);
  const planeOf = (env: EnvironmentName) => (env === "onprem" ? onprem : hosted);
  const dir = join(root, "repo");
  const flat = Object.fromEntries(ENVIRONMENTS.map((e) => [e, join(root, `flat-${e}`)])) as Record<
    EnvironmentName,
    string
  >;
  await mkdir(join(dir, "environments"), { recursive: true });
  for (const env of ENVIRONMENTS) {
    await writeFile(join(dir, "environments", `${env}.yaml`), environment(env));
    await mkdir(join(flat[env], ".plumb", "status"), { recursive: true });
    await mkdir(join(dir, ".plumb", "status", env), { recursive: true });
  }
  const limit = pLimit(32);
  await Promise.all(
    Array.from({ length: count }, (_, i) =>
      limit(() => writeFile(join(dir, `bench-${i}.yaml`), manifest(i))),
    ),
  );
  const fingerprints = new Map<number, Awaited<ReturnType<typeof fingerprintSecretsAsync>>>();
  await Promise.all(
    Array.from({ length: count }, (_, i) =>
      limit(async () =>
        fingerprints.set(
          i,
          await fingerprintSecretsAsync([secret(i)], undefined, ORIGINS, createDerivations()),
        ),
      ),
    ),
  );
  for (const env of ENVIRONMENTS) {
    // Seeding is not measured: a generous limiter so it does not wait on the spec's budget.
    const seeder = createControlPlaneClient({
      apiUrl: planeOf(env).url,
      apiKey: DEFAULT_API_KEY,
      limiter: createRateLimiter({
        clock: systemClock,
        categorize: () => ({ name: "seed", limit: 1_000_000, windowMs: 10_000 }),
        maxConcurrency: 32,
      }),
    });
    await Promise.all(
      Array.from({ length: count }, (_, i) =>
        limit(async () => {
          const name = `bench-${i}${SUFFIX[env]}`;
          const created = await seeder.createDeployment({
            name,
            source: "gitrepo",
            source_config: {
              integration_id: DEFAULT_INTEGRATION_ID,
              repo_url: `https://github.com/acme/bench-${i}`,
              deployment_type: "dev",
              build_on_push: false,
            },
            source_revision_config: { repo_ref: refOf(env, i, true), graph_config_path: "langgraph.json" },
            secrets: [secret(i)],
          });
          const record = JSON.stringify({
            kind: "Deployment",
            name,
            id: created.id,
            latest_revision_id: created.latest_revision_id,
            active_revision_id: null,
            revision_status: null,
            sync: "Synced",
            health: "Healthy",
            git_commit: null,
            manifest_digest: null,
            secret_fingerprints: fingerprints.get(i),
            updated_at: new Date().toISOString(),
            last_error: null,
          });
          const file = `deployment.${name}.json`;
          await writeFile(join(dir, ".plumb", "status", env, file), record);
          await writeFile(join(flat[env], ".plumb", "status", file), record);
          await writeFile(join(flat[env], `bench-${i}.yaml`), resolvedManifest(env, i));
        }),
      ),
    );
  }
  return {
    hosted,
    onprem,
    dir,
    flat,
    env: {
      SAAS_API_URL: hosted.url,
      SAAS_API_KEY: DEFAULT_API_KEY,
      ONPREM_API_URL: onprem.url,
      ONPREM_API_KEY: DEFAULT_API_KEY,
    },
    stop: async () => {
      await Promise.all([hosted.stop(), onprem.stop()]);
    },
  };
}

export const urlOf = (tree: EnvironmentsTree, env: EnvironmentName) =>
  (env === "onprem" ? tree.onprem : tree.hosted).url;

import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach } from "vitest";
import { readApiOptions } from "../../../src/api/config.js";
import { settingsOf } from "../../../src/cli/environments.js";
import {
  type Controller,
  type ControllerStartOptions,
  startController,
} from "../../../src/controller/controller.js";
import { DEFAULT_TENANT_ID } from "../../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../../src/control-plane/server.js";
import type { LoadedEnvironment } from "../../../src/manifest/types.js";
import { fastControllerOptions } from "../harness.js";
import { api, memoryLogger, waitFor, writeDoc } from "../support.js";
import { createLogger } from "../../../src/logger.js";

// Two real control planes on loopback, staging and prod, each with its own API key, and a manifest
// tree defining both environments: the frame of the controller-per-environment tests.

export const STAGING_KEY = "staging-key-0123456789abcdef";
export const PROD_KEY = "prod-key-0123456789abcdef0123";
/** A second key prod's control plane grants (a key rotated in prod's Environment document). */
export const PROD_KEY_2 = "prod-key-2-0123456789abcdef01";

export type EnvironmentsHarness = {
  dir: string;
  staging: RunningControlPlane;
  prod: RunningControlPlane;
  controllers: Controller[];
};

export function useEnvironmentsHarness(prefix: string): EnvironmentsHarness {
  const h = { controllers: [] } as unknown as EnvironmentsHarness;
  const grant = (...keys: string[]) => ({
    apiKeys: keys.map((key) => ({ key, tenants: [DEFAULT_TENANT_ID] })),
  });
  beforeEach(async () => {
    h.dir = await mkdtemp(join(tmpdir(), prefix));
    h.staging = await startControlPlane({
      revisionSeconds: 0.02,
      deploymentReadySeconds: 0,
      ...grant(STAGING_KEY),
    });
    h.prod = await startControlPlane({
      revisionSeconds: 0.02,
      deploymentReadySeconds: 0,
      ...grant(PROD_KEY, PROD_KEY_2),
    });
  });
  afterEach(async () => {
    for (const c of h.controllers.splice(0)) await c.stop(1_000);
    await h.staging.stop();
    await h.prod.stop();
    await rm(h.dir, { recursive: true, force: true });
  });
  return h;
}

export const environmentDoc = (name: string, url: string, keyVar: string, more = "") => `apiVersion: plumb/v1
kind: Environment
metadata:
  name: ${name}
spec:
  api_url: ${url}
  api_key: {env: ${keyVar}}
${more}`;

/** alpha runs everywhere (prod pins its own image), beta in staging only. */
export async function writeTree(
  h: EnvironmentsHarness,
  prodUrl = h.prod.url,
  prodImage = "img/alpha:prod-1",
) {
  await writeDoc(h.dir, "env-staging.yaml", environmentDoc("staging", h.staging.url, "STAGING_KEY"));
  await writeDoc(h.dir, "env-prod.yaml", environmentDoc("prod", prodUrl, "PROD_KEY"));
  await writeAlpha(h, prodImage);
  await writeDoc(h.dir, "beta.yaml", {
    apiVersion: "plumb/v1",
    kind: "Deployment",
    metadata: { name: "beta", environments: ["staging"] },
    spec: { source: "internal_container", source_revision_config: { image_uri: "img/beta:1" } },
  });
}

export const writeAlpha = (h: EnvironmentsHarness, prodImage: string, baseImage = "img/alpha:1") =>
  writeDoc(h.dir, "alpha.yaml", {
    apiVersion: "plumb/v1",
    kind: "Deployment",
    metadata: { name: "alpha" },
    spec: { source: "internal_container", source_revision_config: { image_uri: baseImage } },
    environments: { prod: { spec: { source_revision_config: { image_uri: prodImage } } } },
  });

/** Controller options as `plumb controller` builds them, each environment's API read from its Environment. */
export function environmentOptions(
  h: EnvironmentsHarness,
  extra: Partial<ControllerStartOptions> = {},
  env: NodeJS.ProcessEnv = { ...process.env, STAGING_KEY, PROD_KEY },
): ControllerStartOptions {
  const base = fastControllerOptions(h.staging, { source: { kind: "dir", dir: h.dir } });
  return {
    ...base,
    api: () => {
      throw new Error("a tree with environments must not read PLUMB_API_URL");
    },
    env,
    logger: process.env.DEBUG_ENV_TEST ? createLogger({ level: "debug" }) : memoryLogger().logger,
    environmentApi: (environment: LoadedEnvironment, root: string) => {
      const settings = settingsOf(environment, root, env);
      return readApiOptions(settings.env, settings.flags);
    },
    ...extra,
  };
}

/** Revisions per deployment name on one control plane. */
export async function revisionsOn(cp: RunningControlPlane, key: string): Promise<Record<string, number>> {
  const client = api(cp.url, key);
  const counts: Record<string, number> = {};
  for (const d of await client.deployments()) counts[d.name] = (await client.revisions(d.id)).length;
  return counts;
}

/** Deployment names on one control plane, each once per deployment (duplicates would show twice). */
export async function namesOn(cp: RunningControlPlane, key: string): Promise<string[]> {
  return (await api(cp.url, key).deployments()).map((d) => d.name).sort();
}

export async function imageOn(
  cp: RunningControlPlane,
  key: string,
  name: string,
): Promise<string | undefined> {
  const d = await api(cp.url, key).deployment(name);
  return (d as { source_revision_config?: { image_uri?: string } }).source_revision_config?.image_uri;
}

const execFileAsync = promisify(execFile);
/** git with a committer identity, in `cwd`. */
export const git = (cwd: string, ...args: string[]) =>
  execFileAsync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd });

/** The harness's tree committed under deploy/ on main of a bare repository (h.dir/manifests.git). */
export async function pushTreeToGit(h: EnvironmentsHarness): Promise<{ bare: string; deployDir: string }> {
  const bare = join(h.dir, "manifests.git");
  const work = join(h.dir, "work");
  await execFileAsync("git", ["init", "--bare", "-b", "main", bare]);
  await execFileAsync("git", ["clone", bare, work]);
  await git(work, "checkout", "-B", "main");
  const deployDir = join(work, "deploy");
  await mkdir(deployDir, { recursive: true });
  await writeTree({ ...h, dir: deployDir });
  await git(work, "add", ".");
  await git(work, "commit", "-m", "environments");
  await git(work, "push", "origin", "main");
  return { bare, deployDir };
}

/** A controller following deploy/ of that repository, once it leads both environments and is ready. */
export async function startGitController(
  h: EnvironmentsHarness,
  bare: string,
  extra: Partial<ControllerStartOptions>,
): Promise<Controller> {
  const source = {
    kind: "git" as const,
    url: bare,
    branch: "main",
    path: "deploy",
    workDir: join(h.dir, "checkout"),
    intervalMs: 3_600_000,
  };
  const controller = await startController(environmentOptions(h, { source, ...extra }));
  h.controllers.push(controller);
  // ready() holds once the environments led so far are settled: wait until both are led here.
  const led = () => (controller.status().environments ?? []).filter((e) => e.role === "leader").length;
  await waitFor("both environments settled", () => led() === 2 && controller.ready(), 30_000);
  return controller;
}

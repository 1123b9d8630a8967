import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import type { RetryPolicy } from "../../src/api/transport/retry.js";
import { type Clock, systemClock } from "../../src/clock.js";
import type { ControlPlaneOptions } from "../../src/control-plane/options.js";
import { DEFAULT_API_KEY, DEFAULT_INTEGRATION_ID } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import type { Plan } from "../../src/diff/plan/plan-types.js";
import { planManifests, recordsFromStatus } from "../../src/reconcile/plan/plan-run.js";
import { applyObjects } from "../../src/reconcile/session.js";
import { type ClientPorts, createApplyPorts } from "../../src/apply/api/api-adapter.js";
import { applyPlan } from "../../src/apply/apply.js";
import type { ApplyObject, ApplyOptions, ApplyReport } from "../../src/apply/apply-types.js";
import { loadStatusStore } from "../../src/status/status-store.js";
import { anyFile, saveObjectStatus } from "../../src/status/write/save-records.js";

/** A clock whose sleeps move time forward at once: the control plane shares it, so revisions progress. */
export class FastClock implements Clock {
  constructor(public t = Date.parse("2026-01-01T00:00:00Z")) {}
  now = () => this.t;
  sleep = async (ms: number, signal?: AbortSignal) => {
    if (signal?.aborted) throw signal.reason;
    this.t += ms;
    await new Promise((resolve) => setImmediate(resolve));
  };
}

export const gitrepoDoc = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: "plumb/v1",
  kind: "Deployment",
  metadata: { name },
  spec: {
    source: "gitrepo",
    source_config: {
      integration_id: DEFAULT_INTEGRATION_ID,
      repo_url: `https://github.com/acme/${name}`,
      deployment_type: "dev",
      build_on_push: false,
    },
    source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
    ...spec,
  },
});

export const containerDoc = (name: string, image: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: "plumb/v1",
  kind: "Deployment",
  metadata: { name },
  spec: {
    source: "internal_container",
    source_config: {},
    source_revision_config: { image_uri: image },
    ...extra,
  },
});

export async function writeManifests(root: string, docs: object[]): Promise<void> {
  await mkdir(root, { recursive: true });
  await writeFile(join(root, "deployments.yaml"), docs.map((d) => stringify(d)).join("---\n"));
}

export type Env = {
  cp: RunningControlPlane;
  clock: Clock;
  root: string;
  statusDir: string;
  ports: ClientPorts;
  plan(): Promise<{ plan: Plan; objects: ApplyObject[] }>;
  apply(options?: Partial<ApplyOptions>): Promise<ApplyReport>;
};

/** A local control plane on port 0, a temporary manifest root, and the engine wired to both. */
export async function startEnv(
  cpOptions: Partial<ControlPlaneOptions> = {},
  clock: Clock = systemClock,
  /** Where plan reads secrets' `valueFrom: {env}` (a test's own, so it need not write process.env). */
  processEnv: NodeJS.ProcessEnv = process.env,
  /** The client's retry policy over the harness's short waits (test/apply/faults.e2e: more attempts). */
  retry: Partial<RetryPolicy> = {},
): Promise<Env> {
  const cp = await startControlPlane({
    revisionSeconds: 0,
    deploymentReadySeconds: 0,
    runSeconds: 0,
    clock,
    ...cpOptions,
  });
  const root = await mkdtemp(join(tmpdir(), "plumb-apply-"));
  const statusDir = join(root, ".plumb/status");
  const ports = createApplyPorts({
    clock,
    api: { apiUrl: cp.url, apiKey: DEFAULT_API_KEY, platformUrl: cp.url },
    transport: { retry: { baseDelayMs: 5, maxDelayMs: 50, ...retry }, timeoutMs: 5_000 },
  });
  const plan = async () => {
    const store = await loadStatusStore(statusDir);
    const result = await planManifests({
      root,
      controlPlane: ports.controlPlane,
      platform: ports.platformClient,
      recorded: recordsFromStatus(store),
      env: processEnv,
    });
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    return { plan: result.plan, objects: applyObjects(result) };
  };
  return {
    cp,
    clock,
    root,
    statusDir,
    ports,
    plan,
    async apply(options = {}) {
      const { objects } = await plan();
      const store = await loadStatusStore(statusDir);
      return applyPlan(ports, objects, {
        clock,
        wait: true,
        timeoutMs: 60_000,
        concurrency: 8,
        pollIntervalMs: 10,
        maxPollIntervalMs: 100,
        previous: store.objects,
        record: async (status) => void (await saveObjectStatus(statusDir, status, anyFile)),
        gitCommit: "test-commit",
        ...options,
      });
    },
  };
}

export const call = async (cp: RunningControlPlane, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${cp.url}${path}`, {
    method,
    headers: { "x-api-key": DEFAULT_API_KEY, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers, checked by assertions
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, any>) : undefined };
};

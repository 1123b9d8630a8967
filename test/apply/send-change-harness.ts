import { afterEach } from "vitest";
import { createApplyPorts, type ClientPorts } from "../../src/apply/api/api-adapter.js";
import type { SendContext } from "../../src/apply/engine-types.js";
import { DEFAULT_API_KEY, DEFAULT_INTEGRATION_ID } from "../../src/control-plane/options.js";
import type { FaultSpec } from "../../src/control-plane/http/faults.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import type { PlannedChange } from "../../src/diff/plan/plan-types.js";
import type { Deployment } from "../../src/schema/deployment.js";
import { FastClock } from "../reconcile/harness.js";

// sendChange's tests run against the local control plane's real answers. Faults hit PATCH only
// (GETs and the create are served), so each case scripts exactly what happens to the PATCH; what
// landed is counted on the control plane (its revisions), attempts on the wire.

let cp: RunningControlPlane | undefined;
afterEach(async () => {
  await cp?.stop();
  cp = undefined;
});

/** Stops the control plane the last setup started (a test then starts another on its data). */
export const stopControlPlane = async (): Promise<void> => {
  await cp?.stop();
  cp = undefined;
};

export type Setup = {
  ports: ClientPorts;
  clock: FastClock;
  /** PATCHes and GETs that reached fetch. */
  patches: () => number;
  gets: () => number;
  deployment: Deployment;
};

export type SetupOptions = {
  /** A --data directory; with `deployment`, the state of an earlier control plane there. */
  data?: { dataDir: string; deployment?: Deployment };
  /** fetch's answer to the first PATCH instead of sending it (a network failure). */
  firstPatchFails?: () => Error;
  /** Attempts the HTTP client makes itself (default 6): 1 hands every failure to sendChange. */
  clientAttempts?: number;
};

/** A control plane with `faults` on PATCH, one deployment, and ports that count requests sent. */
export async function setup(
  faults: Omit<FaultSpec, "methods"> | undefined,
  stopAfter = 50,
  options: SetupOptions = {},
): Promise<Setup> {
  const { data, firstPatchFails, clientAttempts = 6 } = options;
  const clock = new FastClock();
  cp = await startControlPlane({
    revisionSeconds: 0,
    deploymentReadySeconds: 0,
    runSeconds: 0,
    clock,
    dataDir: data?.dataDir,
    faults: faults && { ...faults, methods: ["PATCH"] },
  });
  let patches = 0;
  let gets = 0;
  const counting: typeof fetch = async (input, init) => {
    if (init?.method === "GET") gets += 1;
    if (init?.method === "PATCH") {
      patches += 1;
      if (patches === 1 && firstPatchFails) throw firstPatchFails();
    }
    // Bounded: a send that never gives up fails here instead of hanging the suite.
    if (patches > stopAfter) throw new Error(`more than ${stopAfter} PATCHes sent`);
    return fetch(input, init);
  };
  const ports = createApplyPorts({
    clock,
    api: { apiUrl: cp.url, apiKey: DEFAULT_API_KEY, platformUrl: cp.url },
    transport: {
      fetch: counting,
      retry: { baseDelayMs: 5, maxDelayMs: 50, maxAttempts: clientAttempts },
      timeoutMs: 5_000,
    },
  });
  const counts = { patches: () => patches, gets: () => gets };
  if (data?.deployment) return { ports, clock, ...counts, deployment: data.deployment };
  const deployment = await ports.controlPlane.createDeployment(gitDeployment("svc"));
  gets = 0;
  return { ports, clock, ...counts, deployment };
}

/** A create body of a gitrepo deployment. */
export const gitDeployment = (name: string) => ({
  name,
  source: "gitrepo" as const,
  source_config: {
    integration_id: DEFAULT_INTEGRATION_ID,
    repo_url: "https://github.com/acme/svc",
    deployment_type: "dev" as const,
    build_on_push: false,
  },
  source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
  secrets: [],
});

/** A planned update of deployment `id` (named svc) sending `body`. */
export const update = (id: string, body: Record<string, unknown>, newRevision: boolean): PlannedChange => ({
  kind: "Deployment",
  name: "svc",
  file: "deployments.yaml",
  line: 1,
  action: "update",
  id,
  new_revision: newRevision,
  revision_fields: newRevision ? Object.keys(body) : [],
  in_place_fields: newRevision ? [] : Object.keys(body),
  request: { method: "PATCH", path: `/v2/deployments/${id}`, body },
  diff: [],
  errors: [],
  warnings: [],
  changed_secrets: [],
});

export const newRef = { source_revision_config: { repo_ref: "release" } };
export const context = (clock: FastClock, random = () => 0.5): SendContext => ({ clock, random });

export const revisions = async (s: Setup) =>
  (await s.ports.controlPlane.listRevisions(s.deployment.id, { limit: 100 })).resources;

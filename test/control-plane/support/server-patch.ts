import { Ajv } from "ajv";
import { checkDeploymentBody } from "../../../src/control-plane/deployments/body-checks.js";
import {
  customUrlOf,
  type DeploymentRecord,
  formatDeployment,
} from "../../../src/control-plane/deployments/record.js";
import type { RuleEnv } from "../../../src/control-plane/deployments/rules.js";
import { planPatch } from "../../../src/control-plane/deployments/patch-rules.js";
import { DeploymentStore } from "../../../src/control-plane/deployments/store.js";
import { type Deployment, DeploymentPatchRequest } from "../../../src/schema/deployment.js";

// The control plane's own PATCH path without the HTTP round trip, for property tests that check
// the client's diff engine against the server (not against a model of it): the request schema
// (ajv as fastify runs it), the cross-field checks, planPatch and the store, then the API view.

const BASE_URL = "http://control-plane.test";
const TIMING = { revisionMs: 0, readyMs: 0 };
const NOW = Date.parse("2025-01-02T00:00:00Z");

const ajv = new Ajv({ allErrors: true, coerceTypes: false, removeAdditional: false, useDefaults: false });
const validPatch = ajv.compile(DeploymentPatchRequest);

/** A rejected request: what the real server answers (422 or 400) and why. */
export class ServerRefused extends Error {
  constructor(
    readonly status: 400 | 422,
    detail: unknown,
  ) {
    super(`${status} ${JSON.stringify(detail)}`);
  }
}

const defined = (object: object): Record<string, unknown> =>
  Object.fromEntries(Object.entries(object).filter(([, v]) => v !== null && v !== undefined));

/** The record the server would hold for this API view (gitrepo custom_url is derived, not stored). */
export function recordOf(live: Deployment): DeploymentRecord {
  const sourceConfig = defined(live.source_config);
  if (live.source === "gitrepo") delete sourceConfig.custom_url;
  return {
    id: live.id,
    tenantId: live.tenant_id,
    name: live.name,
    source: live.source,
    sourceConfig,
    sourceRevisionConfig: defined(live.source_revision_config),
    secretNames: live.secrets.map((s) => s.name),
    secretReferences: live.secret_references ?? null,
    createdAt: NOW - 1000,
    updatedAt: NOW - 1000,
    revisions: [],
    uploads: [],
  };
}

/** The deployment exactly as the server's GET shows it. */
export const serverView = (record: DeploymentRecord): Deployment =>
  formatDeployment(record, NOW, TIMING, BASE_URL);

const envOf = (live: Deployment): RuleEnv => ({
  mode: live.source === "gitrepo" ? "saas" : "self-hosted",
  listeners:
    typeof live.source_config.listener_id === "string"
      ? [{ id: live.source_config.listener_id, compute_type: "k8s", compute_id: "c" }]
      : [],
  integrations: [],
});

/** PATCH `body` onto `live` with the server's rules; the deployment it answers, or ServerRefused. */
export function patchOnServer(live: Deployment, body: Record<string, unknown>): Deployment {
  const request = structuredClone(body); // what arrives is parsed JSON, never the caller's objects
  if (!validPatch(request)) throw new ServerRefused(422, validPatch.errors);
  const issues = checkDeploymentBody(request);
  if (issues.length > 0) throw new ServerRefused(422, issues);
  const record = recordOf(live);
  let plan;
  try {
    plan = planPatch(record, request, envOf(live), customUrlOf(BASE_URL, record.id));
  } catch (error) {
    throw new ServerRefused(400, (error as Error).message);
  }
  new DeploymentStore(TIMING).patch(record, plan, NOW);
  return serverView(record);
}

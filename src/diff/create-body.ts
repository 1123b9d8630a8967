import type { Secret } from "../schema/deployment.js";
import type { DeploymentSpec } from "../schema/manifest.js";
import { roundResourceSpec } from "./resource-spec.js";
import { type JsonObject, sortByName, withoutAbsent } from "./values.js";

/** POST /v2/deployments body for a deployment that does not exist yet (secrets resolved). */
export function buildCreateBody(
  name: string,
  spec: DeploymentSpec,
  secrets: readonly Secret[] | undefined,
): JsonObject {
  const sourceConfig = withoutAbsent(spec.source_config);
  if (spec.source === "gitrepo") delete sourceConfig.custom_url;
  const body: JsonObject = {
    name,
    source: spec.source,
    source_config: sourceConfig,
    source_revision_config: withoutAbsent(spec.source_revision_config),
    secrets: (secrets ?? []).map(({ name: secretName, value }) => ({ name: secretName, value })),
  };
  if (spec.secret_references) body.secret_references = spec.secret_references;
  return body;
}

/** The normalised desired state of a deployment to create (what the diff adds). */
export function normaliseCreate(body: JsonObject): JsonObject {
  const sourceConfig = { ...(body.source_config as JsonObject) };
  if (sourceConfig.resource_spec)
    sourceConfig.resource_spec = roundResourceSpec(sourceConfig.resource_spec as JsonObject);
  const state: JsonObject = {
    ...body,
    source_config: sourceConfig,
    secrets: sortByName(body.secrets as Secret[]),
  };
  if (Array.isArray(body.secret_references))
    state.secret_references = sortByName(body.secret_references as Secret[]);
  return state;
}

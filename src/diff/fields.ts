import type { ChangeError } from "./plan/plan-types.js";

export type { FieldChange } from "./plan/plan-types.js";

// Classification of deployment fields (spec 4.1): rule 2 lists the fields a PATCH cannot change;
// rule 1 (the revision fields) lives in src/schema/revision-fields.ts, shared with the API client.

export const IMMUTABLE_SOURCE_CONFIG: ReadonlySet<string> = new Set([
  "integration_id",
  "repo_url",
  "deployment_type",
  "listener_id",
]);
/**
 * The source_config ids the control plane stores canonical (lower case, as it echoes them): a
 * manifest's upper-case spelling of the same id is the same id (docs/plan.md).
 */
export const UUID_SOURCE_CONFIG: ReadonlySet<string> = new Set(["integration_id", "listener_id"]);
/** listener_config's only key; immutable like the fields above. */
export const LISTENER_NAMESPACE_FIELD = "source_config.listener_config.k8s_namespace";

export const show = (value: unknown): string => (value === undefined ? "null" : JSON.stringify(value));

/** Warning for a field the manifest sets to null while it has a value live: PATCH cannot clear it. */
export function cannotClear(field: string, live: unknown): ChangeError {
  return {
    field,
    message: `${field} is ${show(live)} live but null in the manifest; PATCH cannot clear a field, so it keeps its live value (remove the key to stop managing it)`,
  };
}

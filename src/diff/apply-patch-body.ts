import { PlumbError } from "../errors.js";
import { type Deployment, MASKED_SECRET_VALUE } from "../schema/deployment.js";
import {
  IMMUTABLE_LISTENER_CONFIG,
  IMMUTABLE_SOURCE_CONFIG,
  REVISION_FIELDS_OF_SOURCE_REVISION_CONFIG,
} from "./fields.js";
import { fillResourceDefaults } from "./resource-spec.js";
import { clone, deepEqual, isAbsent, isObject, type JsonObject } from "./values.js";

// A pure model of how the control plane merges a PATCH body (decisions.md "Patch semantics"):
// null/absent leaves a field unchanged; resource_spec and secrets replace whole; an unchangeable
// field is accepted with its current value and refused otherwise. Used by the property tests and
// by apply to know what state to expect.

/** True when the server creates a revision for this body (spec 4.1 rule 1). */
export function createsRevision(body: JsonObject): boolean {
  const src = isObject(body.source_revision_config) ? body.source_revision_config : {};
  const sc = isObject(body.source_config) ? body.source_config : {};
  return (
    [...REVISION_FIELDS_OF_SOURCE_REVISION_CONFIG].some((key) => !isAbsent(src[key])) ||
    !isAbsent(body.secrets) ||
    !isAbsent(sc.resource_spec)
  );
}

const refuse = (field: string) =>
  new PlumbError("immutable-field", `${field} cannot be changed by patch`, { exitCode: 1 });

/** The deployment as the server would return it after the PATCH (secret values masked). */
export function applyPatchBody(live: Deployment, body: JsonObject): Deployment {
  const next = clone(live);
  const config = next.source_config as JsonObject;
  if (isObject(body.source_config)) {
    for (const [key, value] of Object.entries(body.source_config)) {
      if (isAbsent(value)) continue;
      if (IMMUTABLE_SOURCE_CONFIG.has(key)) {
        if (!deepEqual(value, config[key])) throw refuse(`source_config.${key}`);
      } else if (key === "resource_spec") {
        config[key] = fillResourceDefaults(value as JsonObject);
      } else if (key === "listener_config" && isObject(value)) {
        const current = isObject(config[key]) ? config[key] : {};
        for (const sub of IMMUTABLE_LISTENER_CONFIG) {
          if (!isAbsent(value[sub]) && !deepEqual(value[sub], current[sub]))
            throw refuse(`source_config.listener_config.${sub}`);
        }
        config[key] = { ...current, ...value };
      } else config[key] = value;
    }
  }
  if (isObject(body.source_revision_config)) {
    const revision = next.source_revision_config as JsonObject;
    for (const [key, value] of Object.entries(body.source_revision_config))
      if (!isAbsent(value)) revision[key] = value;
  }
  if (Array.isArray(body.secrets)) {
    next.secrets = (body.secrets as { name: string }[]).map(({ name }) => ({
      name,
      value: MASKED_SECRET_VALUE,
    }));
  }
  if (Array.isArray(body.secret_references))
    next.secret_references = clone(body.secret_references) as Deployment["secret_references"];
  return next;
}

import type { FieldChange } from "./fields.js";
import { fillResourceDefaults, isDerivedDefault, roundResourceSpec } from "./resource-spec.js";
import { deepEqual, isAbsent, type JsonObject, withoutAbsent } from "./values.js";

export type ResourceSpecDiff = {
  live: JsonObject;
  desired: JsonObject;
  fields: FieldChange[];
  /** The whole resource_spec to send, or undefined when nothing changed. */
  body: JsonObject | undefined;
};

const PREFIX = "source_config.resource_spec.";

/**
 * resource_spec is replaced whole by a PATCH, yet sub-fields absent from the manifest stay
 * unmanaged: they are compared with nothing, and when the spec is sent their live values are
 * carried over, except values that are just the server's default (those follow their source
 * field, as they would on the server). A sub-field written as null is managed as "unset".
 */
export function diffResourceSpec(
  desired: JsonObject,
  liveRaw: JsonObject | null | undefined,
): ResourceSpecDiff {
  const wanted = roundResourceSpec(desired);
  const unset = Object.keys(desired).filter((key) => isAbsent(desired[key]));
  const stored = fillResourceDefaults(liveRaw);
  const live: JsonObject = {};
  const fields: FieldChange[] = [];
  for (const [key, value] of Object.entries(wanted)) {
    if (!isAbsent(stored[key])) live[key] = stored[key];
    if (!deepEqual(value, stored[key])) {
      fields.push({ field: PREFIX + key, class: "revision", old: stored[key] ?? null, new: value });
    }
  }
  for (const key of unset) {
    if (isAbsent(stored[key]) || isDerivedDefault(stored, key)) continue;
    live[key] = stored[key];
    fields.push({ field: PREFIX + key, class: "revision", old: stored[key], new: null });
  }
  if (fields.length === 0) return { live, desired: wanted, fields, body: undefined };

  const body: JsonObject = {};
  for (const [key, value] of Object.entries(desired)) if (!isAbsent(value)) body[key] = value;
  // Carried over as stored live (not rounded again: the server keeps what it stored).
  for (const [key, value] of Object.entries(withoutAbsent(liveRaw))) {
    if (key in desired || isDerivedDefault(stored, key)) continue;
    body[key] = value;
  }
  return { live, desired: wanted, fields, body };
}

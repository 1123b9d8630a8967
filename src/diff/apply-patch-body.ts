import { REVISION_FIELDS_OF_SOURCE_REVISION_CONFIG } from "./fields.js";
import { isAbsent, isObject, type JsonObject } from "./values.js";

// Whether a PATCH body creates a revision (decisions.md "Patch semantics"). How the server merges
// a body is not modelled here: test/diff/properties.test.ts checks plans against the local control
// plane's own rules (test/control-plane/support/server-patch.ts).

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

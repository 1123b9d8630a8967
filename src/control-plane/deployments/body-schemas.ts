import type { TSchema } from "@sinclair/typebox";
import { Type } from "@sinclair/typebox";
import { Nullable, UUID_PATTERN } from "../../schema/common.js";
import {
  DeploymentCreateRequest,
  DeploymentPatchRequest,
  DeploymentSource,
  type SourceConfig,
} from "../../schema/deployment.js";
import { ANY_UUID_PATTERN, canonicalUuid } from "../http/uuid.js";

// The bodies the deployment routes validate: plumb's request shapes (src/schema/deployment.ts,
// shared with the client and the manifests) as a FastAPI service with pydantic models reads them
// (docs/control-plane.md "Ids" and "Validation and errors"):
// - a uuid field takes every spelling pydantic's UUID parses (hyphenated, 32 hex digits,
//   `{hyphenated}`, `urn:uuid:hyphenated`, any case), as the path ids and X-Tenant-Id do; anything
//   else is 422 uuid_parsing. canonicalBodyIds then stores the canonical lower-case form, so the
//   answer echoes it and the stored id compares equal whichever spelling a later PATCH sends;
// - a resource_spec number the spec gives no bounds (scale, memory, database and the deprecated
//   fields) cannot be negative: 422 greater_than_equal (pydantic's ge=0). The shared ResourceSpec
//   says so itself (minimum 0, src/schema/resource-spec.ts), so the manifests' validate agrees.

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null;

/** A copy of `schema` (plain JSON, as ajv reads it) with the server's uuid spellings. */
function serverBodySchema<T extends TSchema>(schema: T): T {
  const copy = JSON.parse(JSON.stringify(schema)) as T;
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!isNode(node)) return;
    if (node.pattern === UUID_PATTERN) node.pattern = ANY_UUID_PATTERN;
    for (const value of Object.values(node)) walk(value);
  };
  walk(copy);
  return copy;
}

export const CreateBody = serverBodySchema(DeploymentCreateRequest);

/**
 * The spec's DeploymentPatchRequest with `name` and `source` taken too, so that sending one is
 * judged by its value (patch-rules.ts checkNameAndSource) rather than refused as an unknown field.
 */
export const PatchBody = serverBodySchema(
  Type.Object(
    {
      ...DeploymentPatchRequest.properties,
      name: Type.Optional(Nullable(Type.String(), "Cannot be changed: the current name or null.")),
      source: Type.Optional(Nullable(DeploymentSource, "Cannot be changed: the current source or null.")),
    },
    { additionalProperties: false },
  ),
);

/** The body's uuid fields (validated) in their canonical form, as pydantic hands them on. */
export function canonicalBodyIds(config: SourceConfig | null | undefined): void {
  if (!config) return;
  for (const field of ["integration_id", "listener_id"] as const) {
    const value = config[field];
    if (typeof value === "string") config[field] = canonicalUuid(value) ?? value;
  }
}

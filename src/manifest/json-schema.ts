import { EnvironmentManifest } from "../schema/environment.js";
import { DeploymentManifest, DOCUMENT_KINDS, OrganizationAccessManifest } from "../schema/manifest.js";

// Plain draft-07 JSON Schemas built from the TypeBox shapes. The same objects feed ajv and the
// committed files in schemas/, so what editors check and what `plumb validate` checks cannot differ.

export type JsonSchema = { [key: string]: unknown };

const DRAFT_07 = "http://json-schema.org/draft-07/schema#";
const ANY_KEY = "^(.*)$";

const isObject = (value: unknown): value is JsonSchema =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Rewrites TypeBox output into the plainer forms editors and error messages handle best:
 * a union of literals becomes `enum`, `anyOf [X, null]` becomes `type: [X, "null"]`, and a
 * record keyed by any string becomes `additionalProperties`. Symbol keys (TypeBox internals) go.
 */
export function simplifySchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(simplifySchema);
  if (!isObject(schema)) return schema;
  const out: JsonSchema = {};
  for (const key of Object.keys(schema)) {
    const value = schema[key];
    out[key] =
      key === "properties" && isObject(value)
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, simplifySchema(v)]))
        : simplifySchema(value);
  }
  return ordered(collapse(out));
}

const FIRST_KEYS = ["$schema", "$id", "title", "description", "type", "enum", "const"];

/** Stable, readable key order in the committed files: identity and description first. */
function ordered(schema: JsonSchema): JsonSchema {
  const keys = Object.keys(schema);
  const first = FIRST_KEYS.filter((k) => keys.includes(k));
  return Object.fromEntries(
    [...first, ...keys.filter((k) => !FIRST_KEYS.includes(k))].map((k) => [k, schema[k]]),
  );
}

function collapse(schema: JsonSchema): JsonSchema {
  const { anyOf, patternProperties, ...rest } = schema;
  if (
    isObject(patternProperties) &&
    Object.keys(patternProperties).length === 1 &&
    ANY_KEY in patternProperties
  ) {
    const value = patternProperties[ANY_KEY];
    return collapse({
      ...rest,
      additionalProperties: isObject(value) && Object.keys(value).length === 0 ? true : value,
    });
  }
  if (!Array.isArray(anyOf)) return schema;
  const branches = anyOf.filter(isObject);
  if (branches.length === anyOf.length && branches.every((b) => "const" in b)) {
    return { ...withoutKeys(rest, ["type"]), enum: branches.map((b) => b.const) };
  }
  const nonNull = branches.filter((b) => b.type !== "null");
  const [only] = nonNull;
  if (branches.length === 2 && nonNull.length === 1 && only) {
    const description = rest.description ?? only.description;
    if (Array.isArray(only.enum))
      return { ...only, ...rest, description, enum: [...(only.enum as unknown[]), null] };
    if (typeof only.type === "string" && !("anyOf" in only)) {
      return { ...only, ...rest, description, type: [only.type, "null"] };
    }
  }
  return schema;
}

const withoutKeys = (schema: JsonSchema, keys: string[]): JsonSchema =>
  Object.fromEntries(Object.entries(schema).filter(([k]) => !keys.includes(k)));

const asSchema = (schema: unknown): JsonSchema => simplifySchema(schema) as JsonSchema;

const SCHEMA_BASE = "https://plumb.dev/schemas";

export const DEPLOYMENT_SCHEMA: JsonSchema = ordered({
  ...asSchema(DeploymentManifest),
  $schema: DRAFT_07,
  $id: `${SCHEMA_BASE}/deployment.schema.json`,
  description: "A plumb Deployment manifest: one agent-server deployment, kept in git.",
});

export const ORGANIZATION_ACCESS_SCHEMA: JsonSchema = ordered({
  ...asSchema(OrganizationAccessManifest),
  $schema: DRAFT_07,
  $id: `${SCHEMA_BASE}/organization-access.schema.json`,
  description: "A plumb OrganizationAccess manifest: how SSO users join the organization.",
});

export const ENVIRONMENT_SCHEMA: JsonSchema = ordered({
  ...asSchema(EnvironmentManifest),
  $schema: DRAFT_07,
  $id: `${SCHEMA_BASE}/environment.schema.json`,
  description: "A plumb Environment manifest: a control plane the deployments run on, and their defaults.",
});

const definition = (schema: JsonSchema): JsonSchema => withoutKeys(schema, ["$schema", "$id"]);

/** Accepts any plumb document: the kind picks the shape. */
const PLUMB_SCHEMA: JsonSchema = {
  $schema: DRAFT_07,
  $id: `${SCHEMA_BASE}/plumb.schema.json`,
  title: "plumb manifest",
  description: "Any plumb/v1 document; `kind` selects Deployment, OrganizationAccess or Environment.",
  type: "object",
  required: ["apiVersion", "kind"],
  properties: {
    apiVersion: { const: "plumb/v1", description: "Always plumb/v1." },
    kind: {
      enum: [...DOCUMENT_KINDS],
      description: "The kind of object: Deployment, OrganizationAccess or Environment.",
    },
  },
  allOf: [
    {
      if: { properties: { kind: { const: "Deployment" } } },
      then: { $ref: "#/definitions/Deployment" },
    },
    {
      if: { properties: { kind: { const: "OrganizationAccess" } } },
      then: { $ref: "#/definitions/OrganizationAccess" },
    },
    {
      if: { properties: { kind: { const: "Environment" } } },
      then: { $ref: "#/definitions/Environment" },
    },
  ],
  definitions: {
    Deployment: definition(DEPLOYMENT_SCHEMA),
    OrganizationAccess: definition(ORGANIZATION_ACCESS_SCHEMA),
    Environment: definition(ENVIRONMENT_SCHEMA),
  },
};

/** The committed files of schemas/, by file name. */
export const SCHEMA_FILES: Readonly<Record<string, JsonSchema>> = {
  "deployment.schema.json": DEPLOYMENT_SCHEMA,
  "organization-access.schema.json": ORGANIZATION_ACCESS_SCHEMA,
  "environment.schema.json": ENVIRONMENT_SCHEMA,
  "plumb.schema.json": PLUMB_SCHEMA,
};

import { createRequire } from "node:module";
import type { ErrorObject } from "ajv";
import { MANIFEST_SCHEMAS as SCHEMAS, type SHAPE_NAMES, VALIDATORS_CODE } from "./validators.generated.js";

// The one validator of plumb: ajv, for manifests (manifest/schema-check.ts), control plane answers
// (api/), status records and saved plans. Every shape is compiled at build time, by ajv, into plain
// JavaScript (validators.generated.ts, written by `npm run validators` from the TypeBox shapes):
// nothing is compiled as a command or the controller starts, and neither ajv's compiler nor
// TypeBox is loaded for it. The generated code is made into functions the first time a shape is
// checked, as ajv makes its own generated code into functions, with only ajv's small runtime
// helpers (string length, deep equality) to require.

/** "path: problem" lines where a value is not of its shape; [] when it is. */
export type ShapeCheck = (value: unknown) => string[];

/** An ajv validate function: true or false, and the errors of the last call (first error only). */
type Validate = ((value: unknown) => boolean) & { errors?: ErrorObject[] | null };

type Compiled = (typeof SHAPE_NAMES)[number];

/** The shapes compiled by name (scripts/validators-module.ts lists them). */
export type ShapeName = Exclude<Compiled, `Manifest${string}`>;

export type ManifestKind = "Deployment" | "OrganizationAccess" | "Environment";

let compiled: Record<Compiled, Validate> | undefined;

function validators(): Record<Compiled, Validate> {
  if (!compiled) {
    const exports = {} as Record<Compiled, Validate>;
    // Code generated at build time from our own schemas (a constant of this package), not input.
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- see above
    const define = new Function("exports", "require", VALIDATORS_CODE) as (
      exports: object,
      require: NodeJS.Require,
    ) => void;
    define(exports, createRequire(import.meta.url));
    compiled = exports;
  }
  return compiled;
}

/** The check of one shape: a compiled function, so it costs nothing to ask for. */
export function shapeCheck(name: ShapeName): ShapeCheck {
  return (value) => {
    const validate = validators()[name];
    return validate(value) ? [] : (validate.errors ?? []).map(describeError);
  };
}

/** A manifest kind's validator (first error only: it clears valid documents). */
export const manifestValidator = (kind: ManifestKind): Validate => validators()[`Manifest${kind}`];

/** The manifests' JSON Schemas, for the detailed validator of invalid documents (schema-check.ts). */
export const MANIFEST_SCHEMAS: Record<ManifestKind, object> = SCHEMAS;

/** "/spec/name: must be string"; a missing property is named in the path, as it would be found. */
function describeError(error: ErrorObject): string {
  const missing =
    error.keyword === "required" ? (error.params as { missingProperty?: string }).missingProperty : undefined;
  const path = missing === undefined ? error.instancePath : `${error.instancePath}/${missing}`;
  return `${path || "/"}: ${error.message ?? "is invalid"}`;
}

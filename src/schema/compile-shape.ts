import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";

// The one validator of plumb: ajv, for manifests (manifest/schema-check.ts), control plane answers
// (api/shape-check.ts), status records and saved plans. The TypeBox shapes of this folder are plain
// JSON Schema: ajv compiles each once, into a function, and TypeBox's own compiler is not loaded.

/** "path: problem" lines where a value is not of its shape; [] when it is. */
export type ShapeCheck = (value: unknown) => string[];

let ajv: Ajv | undefined;
const compiled = new WeakMap<object, ValidateFunction>();

/**
 * The shared ajv instance: strict about the schemas (an unknown keyword is a bug here), not about
 * unions of types TypeBox writes as anyOf. First error only: a hostile answer with a million wrong
 * items costs one error object, not a million. Without ajv's optimising passes over the code it
 * generates: they took half of compiling a shape (the API's Deployment: 241 against 86 ms on the
 * shared machine) for code that validates 10,000 manifests 3% faster.
 */
export function sharedAjv(): Ajv {
  ajv ??= new Ajv({ strict: true, strictTypes: false, code: { optimize: false } });
  return ajv;
}

/** A check of `schema`, compiled on first use and kept for the life of the process. */
export function compileShape(schema: object): ShapeCheck {
  return (value) => {
    let validate = compiled.get(schema);
    if (!validate) {
      // A schema with an $id is compiled once per instance: ajv refuses the same $id twice.
      const id = (schema as { $id?: unknown }).$id;
      validate =
        (typeof id === "string" ? sharedAjv().getSchema(id) : undefined) ?? sharedAjv().compile(schema);
      compiled.set(schema, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map(describeError);
  };
}

/** "/spec/name: must be string"; a missing property is named in the path, as it would be found. */
function describeError(error: ErrorObject): string {
  const missing =
    error.keyword === "required" ? (error.params as { missingProperty?: string }).missingProperty : undefined;
  const path = missing === undefined ? error.instancePath : `${error.instancePath}/${missing}`;
  return `${path || "/"}: ${error.message ?? "is invalid"}`;
}

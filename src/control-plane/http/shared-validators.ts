import { createRequire } from "node:module";
import type { Ajv, Options, ValidateFunction } from "ajv";
import type { FastifySchemaCompiler } from "fastify";

// fastify compiles each route's schema anew for every server it builds (a new ajv per server):
// ajv's code generation of the deployment bodies is most of a control plane's start (about 0.15 s
// of its 0.2 s of CPU), and the test suite starts hundreds of control planes in a few processes.
// So the control plane's servers validate with one compiler of their own (controlPlaneValidators):
// an ajv made at the first compile, which compiles each schema object once (the route schemas are
// module constants) and holds that ajv and what it compiled, nothing of any server.

/** A validator compiler for fastify servers that compiles each schema object once. */
export type SchemaValidators = {
  /** For app.setValidatorCompiler: the validator of a schema, compiled the first time it is asked. */
  compiler: FastifySchemaCompiler<object>;
  /** How many schemas were compiled so far (each schema object counts once). */
  compiled: () => number;
};

/**
 * A compiler with `options` (ajv's; fastify's own compiler also passes addUsedSchema false: a
 * schema's $id is not kept as a reference for the next one, so two servers' schemas with one $id
 * do not clash).
 */
export function schemaValidators(options: Options): SchemaValidators {
  let ajv: Ajv | undefined;
  const bySchema = new WeakMap<object, ValidateFunction>();
  let compiled = 0;
  return {
    compiler: ({ schema }) => {
      const known = bySchema.get(schema);
      if (known) return known;
      // ajv is CommonJS: loaded here, as fastify loads it, the first time a route has a schema.
      const { Ajv: AjvClass } = createRequire(import.meta.url)("ajv") as typeof import("ajv");
      ajv ??= new AjvClass({ addUsedSchema: false, ...options });
      const validate = ajv.compile(schema);
      bySchema.set(schema, validate);
      compiled += 1;
      return validate;
    },
    compiled: () => compiled,
  };
}

/**
 * Every error of a body, which is validated as sent: never coerced, trimmed or defaulted; `verbose`
 * gives each error its schema, so a model (an object of properties) is told from a map in the 422.
 */
const CONTROL_PLANE_AJV_OPTIONS: Options = {
  allErrors: true,
  verbose: true,
  coerceTypes: false,
  removeAdditional: false,
  useDefaults: false,
};

/** The control plane's body validators, shared by every server this process starts. */
export const controlPlaneValidators = schemaValidators(CONTROL_PLANE_AJV_OPTIONS);

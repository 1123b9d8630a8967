import type { FastifyInstance, FastifySchemaCompiler } from "fastify";

// fastify compiles each route's schema anew for every server it builds: ajv's code generation of
// the deployment bodies is most of a control plane's start (about 0.15 s of its 0.2 s of CPU), and
// the test suite starts hundreds of control planes in a few processes. The first server's
// validator compiler — fastify's own, made with that server's ajv options — serves every later
// server built with the same options: ajv keeps what it compiled by schema object, and the route
// schemas are module constants, so each is compiled once per process.

const shared = new Map<string, FastifySchemaCompiler<unknown>>();

/**
 * Gives `app` the validator compiler of an earlier server built with the same `ajv.customOptions`
 * (`ajvOptions`, the only ajv setting passed to fastify), or keeps the one `app` makes for those after it.
 */
export function shareValidatorCompiler(app: FastifyInstance, ajvOptions: Record<string, unknown>): void {
  const key = JSON.stringify(ajvOptions);
  const compiler = shared.get(key);
  if (compiler) {
    app.setValidatorCompiler(compiler);
    return;
  }
  app.addHook("onReady", async () => {
    if (!shared.has(key) && app.validatorCompiler) shared.set(key, app.validatorCompiler);
  });
}

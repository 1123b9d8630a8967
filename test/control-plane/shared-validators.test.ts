import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, expect, it } from "vitest";
import { shareValidatorCompiler } from "../../src/control-plane/http/shared-validators.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";

// A control plane's body validators are compiled once per process, not once per server
// (src/control-plane/http/shared-validators.ts): the second server built with the same ajv options
// validates with the first one's compiler, each route still against its own schema.

const apps: FastifyInstance[] = [];
const planes: RunningControlPlane[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
  for (const cp of planes.splice(0)) await cp.stop();
});

/** A server with one POST /items route whose body must hold `field` (a string). */
async function server(ajvOptions: Record<string, unknown>, field: string) {
  const app = Fastify({ ajv: { customOptions: ajvOptions } });
  apps.push(app);
  shareValidatorCompiler(app, ajvOptions);
  const schema = { type: "object", required: [field], properties: { [field]: { type: "string" } } };
  app.post("/items", { schema: { body: schema } }, async () => ({ ok: true }));
  await app.ready();
  return app;
}
const post = async (app: FastifyInstance, body: object) =>
  (await app.inject({ method: "POST", url: "/items", payload: body })).statusCode;

it("a later server built with the same ajv options uses the first one's compiler, against its own schemas", async () => {
  // Options no control plane uses: this test's servers share with each other only.
  const options = { allErrors: true, coerceTypes: false, $comment: "shared-validators.test" };
  const first = await server(options, "name");
  const second = await server({ ...options }, "title");
  expect(first.validatorCompiler).toBeTypeOf("function");
  expect(second.validatorCompiler).toBe(first.validatorCompiler);
  expect(await post(second, { title: "t" })).toBe(200);
  expect(await post(second, { name: "n" })).toBe(400); // its own schema: title is required
  expect(await post(second, { title: 5 })).toBe(400); // not coerced: those options hold
  expect(await post(first, { name: "n" })).toBe(200);
  expect(await post(first, { title: "t" })).toBe(400);
});

it("servers built with other ajv options compile with their own", async () => {
  const strict = await server({ coerceTypes: false, $comment: "shared-validators.test strict" }, "name");
  const coercing = await server({ coerceTypes: true, $comment: "shared-validators.test coercing" }, "name");
  expect(coercing.validatorCompiler).not.toBe(strict.validatorCompiler);
  expect(await post(strict, { name: 5 })).toBe(400);
  expect(await post(coercing, { name: 5 })).toBe(200); // coerced to "5"
});

it("control planes started one after the other each still refuse an invalid body with the 422 issue list", async () => {
  for (let i = 0; i < 2; i++) planes.push(await startControlPlane({ deploymentReadySeconds: 0 }));
  for (const cp of planes) {
    const res = await fetch(`${cp.url}/v2/deployments`, {
      method: "POST",
      headers: { "x-api-key": DEFAULT_API_KEY, "content-type": "application/json" },
      body: JSON.stringify({ name: "ok-name", source: "svn" }),
    });
    expect(res.status).toBe(422);
    const { detail } = (await res.json()) as { detail: Array<{ loc: string[] }> };
    expect(detail.map((d) => d.loc.join("."))).toContain("body.source");
  }
});

import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, expect, it } from "vitest";
import {
  controlPlaneValidators,
  type SchemaValidators,
  schemaValidators,
} from "../../src/control-plane/http/shared-validators.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";

// A control plane's body validators are compiled once per process, not once per server
// (src/control-plane/http/shared-validators.ts): a server built after the first compiles nothing
// again, and each route still validates against its own schema, with the compiler's options.

const apps: FastifyInstance[] = [];
const planes: RunningControlPlane[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
  for (const cp of planes.splice(0)) await cp.stop();
});

/** A body whose `field` must be a string, as the control plane's route schemas: a module constant. */
const requiring = (field: string) => ({
  type: "object",
  required: [field],
  properties: { [field]: { type: "string" } },
});
const NAME = requiring("name");
const TITLE = requiring("title");

/** A server with one POST /items route whose body has `schema`, validated by `validators`. */
async function server(validators: SchemaValidators, schema: object) {
  const app = Fastify();
  apps.push(app);
  app.setValidatorCompiler(validators.compiler);
  app.post("/items", { schema: { body: schema } }, async () => ({ ok: true }));
  await app.ready();
  return app;
}
const post = async (app: FastifyInstance, body: object) =>
  (await app.inject({ method: "POST", url: "/items", payload: body })).statusCode;

it("compiles each schema once for every server, each server validating against its own", async () => {
  const validators = schemaValidators({ allErrors: true, coerceTypes: false });
  const first = await server(validators, NAME);
  expect(validators.compiled()).toBe(1);
  const second = await server(validators, TITLE);
  const third = await server(validators, NAME); // as a second control plane: the same schema
  expect(validators.compiled()).toBe(2); // NAME's once, TITLE's once
  expect(await post(second, { title: "t" })).toBe(200);
  expect(await post(second, { name: "n" })).toBe(400); // its own schema: title is required
  expect(await post(second, { title: 5 })).toBe(400); // not coerced: the options hold
  expect(await post(first, { name: "n" })).toBe(200);
  expect(await post(first, { title: "t" })).toBe(400);
  expect(await post(third, { name: "n" })).toBe(200);
  expect(await post(third, { name: 5 })).toBe(400);
});

it("validates with its own ajv options", async () => {
  const strict = await server(schemaValidators({ coerceTypes: false }), NAME);
  const coercing = await server(schemaValidators({ coerceTypes: true }), NAME);
  expect(await post(strict, { name: 5 })).toBe(400);
  expect(await post(coercing, { name: 5 })).toBe(200); // coerced to "5"
});

it("control planes started one after the other compile nothing again and each refuses an invalid body with the 422 issue list", async () => {
  planes.push(await startControlPlane({ deploymentReadySeconds: 0 }));
  const compiled = controlPlaneValidators.compiled(); // this one's, or an earlier file's in this worker
  expect(compiled).toBeGreaterThanOrEqual(2); // the create and the patch bodies
  planes.push(await startControlPlane({ deploymentReadySeconds: 0 }));
  expect(controlPlaneValidators.compiled()).toBe(compiled);
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

import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkShape } from "../../src/api/transport/shape-check.js";
import { ORGANIZATION_ACCESS_SCHEMA } from "../../src/manifest/json-schema.js";
import { compileShape } from "../../src/schema/compile-shape.js";
import { check } from "../manifest/helpers.js";
import { Integration, Listener, PageOf, UploadUrl } from "../../src/api/shapes.js";
import { savedPlanProblems } from "../../src/reconcile/plan/saved-plan-shape.js";
import { Deployment } from "../../src/schema/deployment.js";
import { Revision } from "../../src/schema/revision.js";
import { parseObjectStatus } from "../../src/status/status-store.js";
import { blankObjectStatus, ObjectStatus } from "../../src/status/status-types.js";

const parseObjectStatusSample = () => JSON.stringify(blankObjectStatus("Deployment", "a"));

// One validator (issue 28): every shape is compiled by ajv (src/schema/compile-shape.ts), strict
// about the schema, so a TypeBox construct that is not plain JSON Schema fails here, not at a user.

const src = fileURLToPath(new URL("../../src/", import.meta.url));

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map(async (e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : [join(dir, e.name)])),
  );
  return nested.flat().filter((f) => f.endsWith(".ts"));
}

describe("one validator: ajv for every shape", () => {
  it("no source file loads TypeBox's compiler, value checker or error iterator", async () => {
    const offenders: string[] = [];
    for (const file of await sourceFiles(src)) {
      const text = await readFile(file, "utf8");
      if (/@sinclair\/typebox\/(compiler|value|errors)/.test(text)) offenders.push(file);
    }
    expect(offenders).toEqual([]);
  });

  it.each([
    ["Deployment", Deployment],
    ["Revision", Revision],
    ["a page of deployments", PageOf(Deployment)],
    ["Integration", Integration],
    ["Listener", Listener],
    ["UploadUrl", UploadUrl],
    ["ObjectStatus", ObjectStatus],
  ])("%s compiles under ajv's strict mode", (_name, schema) => {
    expect(() => checkShape(schema, {})).not.toThrow();
  });

  it("names the path of a wrong or missing field, and of the first problem only", () => {
    const record = JSON.parse(parseObjectStatusSample()) as Record<string, unknown>;
    expect(checkShape(ObjectStatus, record)).toBeNull();
    expect(checkShape(ObjectStatus, { ...record, name: 7 })).toEqual(["/name: must be string"]);
    expect(savedPlanProblems({ format: 1 })?.[0]).toMatch(/^\/\S*: \S/);
    const missing = parseObjectStatus(JSON.stringify({ kind: "Deployment" }));
    expect(missing).toMatch(/^not a status record: \/name must have required property 'name'$/);
  });

  it("answers are lenient about fields a server adds, strict about the ones plumb reads", () => {
    const upload = { upload_url: "https://storage.example/u", object_path: "o/1", extra: 1 };
    expect(checkShape(UploadUrl, upload)).toBeNull();
    expect(checkShape(UploadUrl, { ...upload, upload_url: 5 })?.[0]).toMatch(/^\/upload_url: /);
  });
});

describe("one ajv instance for manifests and shapes", () => {
  it("a manifest schema checked as a shape too is compiled once (ajv refuses an $id twice)", () => {
    const good = { apiVersion: "plumb/v1", kind: "OrganizationAccess", metadata: { name: "a" }, spec: {} };
    expect(
      check(`apiVersion: plumb/v1\nkind: OrganizationAccess\nmetadata: {name: a}\nspec: {}\n`).problems,
    ).toEqual([]);
    expect(compileShape(ORGANIZATION_ACCESS_SCHEMA)(good)).toEqual([]);
    expect(compileShape(ORGANIZATION_ACCESS_SCHEMA)({ ...good, kind: 1 })).not.toEqual([]);
  });
});

import { readFile } from "node:fs/promises";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { type JsonSchema, SCHEMA_FILES, simplifySchema } from "../../src/manifest/json-schema.js";

const committed = async (name: string): Promise<unknown> =>
  JSON.parse(await readFile(new URL(`../../schemas/${name}`, import.meta.url), "utf8"));

/** Every entry of every `properties` object, with its dotted path. */
function fields(schema: unknown, path = ""): Array<{ path: string; schema: JsonSchema }> {
  if (Array.isArray(schema)) return schema.flatMap((s, i) => fields(s, `${path}[${i}]`));
  if (typeof schema !== "object" || schema === null) return [];
  const out: Array<{ path: string; schema: JsonSchema }> = [];
  for (const [key, value] of Object.entries(schema)) {
    if (key === "if") continue; // conditions, not fields
    if (key === "properties" && typeof value === "object" && value !== null) {
      for (const [name, field] of Object.entries(value as Record<string, JsonSchema>)) {
        out.push({ path: `${path}.${name}`, schema: field }, ...fields(field, `${path}.${name}`));
      }
    } else out.push(...fields(value, key === "items" ? `${path}[]` : path));
  }
  return out;
}

describe("committed JSON Schemas", () => {
  it.each(Object.keys(SCHEMA_FILES))(
    "%s matches the TypeBox shapes (run `npm run schemas`)",
    async (name) => {
      expect(await committed(name)).toEqual(JSON.parse(JSON.stringify(SCHEMA_FILES[name])));
    },
  );

  it.each(Object.keys(SCHEMA_FILES))("%s describes every field", (name) => {
    const all = fields(SCHEMA_FILES[name]);
    const least = { "organization-access.schema.json": 5, "environment.schema.json": 30 }[name] ?? 100;
    expect(all.length).toBeGreaterThan(least);
    const missing = all.filter(
      (f) => typeof f.schema.description !== "string" || f.schema.description === "",
    );
    expect(missing.map((f) => f.path)).toEqual([]);
  });

  it.each(Object.keys(SCHEMA_FILES))("%s is a valid draft-07 schema", (name) => {
    const ajv = new Ajv({ strict: true, strictTypes: false });
    expect(() => ajv.compile(SCHEMA_FILES[name]!)).not.toThrow();
    expect(SCHEMA_FILES[name]!.$schema).toBe("http://json-schema.org/draft-07/schema#");
  });

  it("plumb.schema.json accepts either kind and picks the shape by kind", () => {
    const validate = new Ajv({ strictTypes: false }).compile(SCHEMA_FILES["plumb.schema.json"]!);
    const meta = { apiVersion: "plumb/v1", metadata: { name: "acme" } };
    expect(validate({ ...meta, kind: "OrganizationAccess", spec: { invites_enabled: true } })).toBe(true);
    expect(validate({ ...meta, kind: "Deployment", spec: { source: "gitrepo" } })).toBe(true);
    expect(validate({ ...meta, kind: "Deployment", spec: { invites_enabled: true } })).toBe(false);
    expect(validate({ ...meta, kind: "Other", spec: {} })).toBe(false);
    const environment = { api_url: "http://127.0.0.1:8123", api_key: { env: "KEY" } };
    expect(validate({ ...meta, kind: "Environment", spec: environment })).toBe(true);
    expect(validate({ ...meta, kind: "Environment", spec: { ...environment, api_key: "k" } })).toBe(false);
  });

  it("keeps the nested shapes of spec 2.4 with their bounds", () => {
    const text = JSON.stringify(SCHEMA_FILES["deployment.schema.json"]);
    for (const word of [
      "init_containers",
      "sidecars",
      "volumeMounts",
      "imagePullPolicy",
      "image_pull_secrets",
    ]) {
      expect(text).toContain(`"${word}"`);
    }
    type Node = { properties: Record<string, Node>; minimum?: number; maximum?: number };
    const deployment = SCHEMA_FILES["deployment.schema.json"] as unknown as Node;
    const rs = deployment.properties.spec!.properties.source_config!.properties.resource_spec!;
    expect(rs.properties.cpu).toMatchObject({ minimum: 0.1, maximum: 8 });
    expect(rs.properties.cpu_limit).toMatchObject({ minimum: 0.1, maximum: 16 });
  });
});

describe("simplifySchema", () => {
  it("turns a union of literals into an enum and a nullable into a type list", () => {
    const union = {
      anyOf: [
        { const: "a", type: "string" },
        { const: "b", type: "string" },
      ],
      description: "d",
    };
    expect(simplifySchema(union)).toEqual({ description: "d", enum: ["a", "b"] });
    const nullable = { anyOf: [{ type: "string", pattern: "^x$" }, { type: "null" }], description: "d" };
    expect(simplifySchema(nullable)).toEqual({ description: "d", type: ["string", "null"], pattern: "^x$" });
  });

  it("keeps unions it cannot flatten", () => {
    const union = { anyOf: [{ type: "object" }, { type: "string" }] };
    expect(simplifySchema(union)).toEqual(union);
  });
});

import { execFileSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { validatorsModule } from "../../scripts/validators-module.js";
import { savedPlanProblems } from "../../src/reconcile/plan/saved-plan-shape.js";
import { shapeCheck } from "../../src/schema/validators.js";
import { parseObjectStatus } from "../../src/status/status-store.js";
import { blankObjectStatus } from "../../src/status/status-types.js";
import { assertBuilt } from "../support/built-cli.js";
import { check } from "../manifest/helpers.js";

// One validator (issue 28): every shape is checked by ajv, compiled at build time into
// src/schema/validators.generated.ts (scripts/validators-module.ts), strict about the schema, so a
// TypeBox construct that is not plain JSON Schema fails the generation, not a user.

const root = fileURLToPath(new URL("../../", import.meta.url));
const GENERATED = join(root, "src", "schema", "validators.generated.ts");

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map(async (e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : [join(dir, e.name)])),
  );
  return nested.flat().filter((f) => f.endsWith(".ts"));
}

describe("validators compiled at build time", () => {
  it("the committed module is what `npm run validators` writes from the shapes", async () => {
    expect(await readFile(GENERATED, "utf8")).toBe(validatorsModule());
  });

  it("no source file compiles a shape or loads TypeBox's compiler, value checker or error iterator", async () => {
    const offenders: string[] = [];
    for (const file of await sourceFiles(join(root, "src"))) {
      const text = await readFile(file, "utf8");
      if (/@sinclair\/typebox\/(compiler|value|errors)/.test(text)) offenders.push(file);
      if (/\.compile\(/.test(text) && !/schema-check\.ts$|control-plane/.test(file)) offenders.push(file);
    }
    expect(offenders).toEqual([]);
  });

  it("names the path of a wrong or missing field, and of the first problem only", () => {
    const record = blankObjectStatus("Deployment", "a") as unknown as Record<string, unknown>;
    const status = shapeCheck("ObjectStatus");
    expect(status(record)).toEqual([]);
    expect(status({ ...record, name: 7 })).toEqual(["/name: must be string"]);
    expect(savedPlanProblems({ format: 1 })[0]).toMatch(/^\/\S*: \S/);
    const missing = parseObjectStatus(JSON.stringify({ kind: "Deployment" }));
    expect(missing).toMatch(/^not a status record: \/name must have required property 'name'$/);
  });

  it("answers are lenient about fields a server adds, strict about the ones plumb reads", () => {
    const upload = { upload_url: "https://storage.example/u", object_path: "o/1", extra: 1 };
    expect(shapeCheck("UploadUrl")(upload)).toEqual([]);
    expect(shapeCheck("UploadUrl")({ ...upload, upload_url: 5 })[0]).toMatch(/^\/upload_url: /);
    // A page checks each item with the item's own validator.
    const page = shapeCheck("ListenerPage");
    expect(page({ resources: [{ id: "l", compute_type: "k", more: 1 }], offset: 1 })).toEqual([]);
    expect(page({ resources: [{ id: "l", compute_type: 2 }], offset: 1 })).toEqual([
      "/resources/0/compute_type: must be string",
    ]);
  });

  it("an invalid manifest is still explained in full (its detailed validator compiled when needed)", () => {
    const text = `apiVersion: plumb/v1\nkind: OrganizationAccess\nmetadata: {name: a}\nspec: {invites: 1, sso: 2}\n`;
    expect(check(text).problems.map((p) => p.code)).toEqual(["unknown-field", "unknown-field"]);
  });
});

describe("the built code", () => {
  it("loads neither TypeBox nor ajv's compiler to start the controller or validate valid manifests", async () => {
    assertBuilt();
    const dir = await mkdtemp(join(tmpdir(), "plumb-validators-"));
    try {
      const manifest = `apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  source: internal_container\n  source_revision_config: {image_uri: "r/a:1"}\n`;
      await writeFile(join(dir, "a.yaml"), manifest);
      // Every module the child resolves, as a loader hook sees it (ESM and CommonJS alike).
      const hooks = `export async function resolve(specifier, context, next) {
        const result = await next(specifier, context);
        if (/node_modules\\/(@sinclair\\/typebox|ajv\\/dist\\/(?!runtime\\/))/.test(result.url)) console.log("LOADED " + result.url);
        return result;
      }`;
      await writeFile(join(dir, "hooks.mjs"), hooks);
      const script = `
        import { register } from "node:module";
        import { pathToFileURL } from "node:url";
        register(pathToFileURL(${JSON.stringify(join(dir, "hooks.mjs"))}));
        await import(${JSON.stringify(join(root, "dist/src/cli/controller/controller.js"))});
        await import(${JSON.stringify(join(root, "dist/src/cli/controller/run-controller.js"))});
        const { loadManifests } = await import(${JSON.stringify(join(root, "dist/src/manifest/load.js"))});
        const { parseObjectStatus } = await import(${JSON.stringify(join(root, "dist/src/status/status-store.js"))});
        const result = await loadManifests(${JSON.stringify(dir)});
        console.log("manifests " + result.manifests.length + ", problems " + result.problems.length);
        console.log("record " + typeof parseObjectStatus("{}"));`;
      const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
      expect(out.trim().split("\n")).toEqual(["manifests 1, problems 0", "record string"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

import { execFile } from "node:child_process";
import { accessSync, chmodSync, constants, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterEach, describe, expect, it } from "vitest";
import { validateCommand } from "../../../src/cli/offline/validate.js";
import { formatSarif } from "../../../src/manifest/format/format-sarif.js";
import type { Problem } from "../../../src/manifest/types.js";

// validate --output sarif: checked against the SARIF 2.1.0 schema and by Microsoft's SARIF
// validator (the `@microsoft/sarif-multitool` dev dependency ships both for each platform).

const require = createRequire(import.meta.url);
// The package exports the path of its platform's executable; the schema sits beside it.
const multitoolBin = require("@microsoft/sarif-multitool") as string;
const multitoolDir = dirname(multitoolBin);
const schema = JSON.parse(readFileSync(join(multitoolDir, "sarif-2.1.0.json"), "utf8")) as object;
const validateSchema = new Ajv2020({ strict: false, allErrors: true, validateFormats: false }).compile(
  schema,
);

const problem = (over: Partial<Problem> = {}): Problem => ({
  file: "a.yaml",
  line: 3,
  column: 5,
  severity: "error",
  code: "unknown-field",
  field: "spec.x",
  message: "unknown field",
  ...over,
});

const tool = { name: "plumb", version: "0.1.0" };

/** Microsoft's validator: the results it reports at level error (schema and spec rules). */
async function multitoolErrors(file: string): Promise<string[]> {
  const bin = multitoolBin;
  try {
    accessSync(bin, constants.X_OK);
  } catch {
    chmodSync(bin, 0o755); // its postinstall chmod does not run where install scripts are off
  }
  const out = `${file}.validation.sarif`;
  await promisify(execFile)(bin, ["validate", file, "-o", out], { timeout: 60_000 });
  const report = JSON.parse(await readFile(out, "utf8")) as {
    runs: Array<{ results?: Array<{ level?: string; ruleId: string; message: { text?: string } }> }>;
  };
  return (report.runs[0]?.results ?? [])
    .filter((r) => r.level === "error")
    .map((r) => `${r.ruleId}: ${r.message.text ?? ""}`);
}

describe("SARIF log of validation problems", () => {
  it("one result per problem with its rule, level and repository-relative location", () => {
    const log = JSON.parse(
      formatSarif(
        [
          problem({ file: "team a/b.yaml" }),
          problem({ severity: "warning", code: "empty-file", field: "", line: 0, column: 0 }),
        ],
        (file) => `deploy/${file}`,
        tool,
      ),
    );
    expect(validateSchema(log), JSON.stringify(validateSchema.errors)).toBe(true);
    const [run] = log.runs;
    expect(run.tool.driver.rules.map((r: { id: string }) => r.id)).toEqual(["empty-file", "unknown-field"]);
    expect(run.results).toEqual([
      expect.objectContaining({
        ruleId: "empty-file",
        ruleIndex: 0,
        level: "warning",
        message: { text: "unknown field" },
        locations: [
          {
            physicalLocation: {
              artifactLocation: { uri: "deploy/a.yaml", uriBaseId: "%SRCROOT%" },
              region: { startLine: 1, startColumn: 1 },
            },
          },
        ],
      }),
      expect.objectContaining({
        ruleId: "unknown-field",
        ruleIndex: 1,
        level: "error",
        message: { text: "unknown field (spec.x)" },
      }),
    ]);
    expect(run.results[1].locations[0].physicalLocation.artifactLocation.uri).toBe("deploy/team%20a/b.yaml");
  });

  it("percent-encodes a file name's #, ? and % (encodeURI left # and ?: a fragment, a query)", () => {
    const uriOf = (file: string) =>
      JSON.parse(formatSarif([problem({ file })], (f) => f, tool)).runs[0].results[0].locations[0]
        .physicalLocation.artifactLocation.uri as string;
    expect(uriOf("team a/b#c?d%e.yaml")).toBe("team%20a/b%23c%3Fd%25e.yaml");
    expect(uriOf("é/ü.yaml")).toBe("%C3%A9/%C3%BC.yaml");
  });

  it("an empty run when there is nothing to report", () => {
    const log = JSON.parse(formatSarif([], (f) => f, tool));
    expect(validateSchema(log)).toBe(true);
    expect(log.runs[0].results).toEqual([]);
  });
});

describe("plumb validate --output sarif", () => {
  const saved = process.env.GITHUB_WORKSPACE;
  afterEach(() => {
    if (saved === undefined) delete process.env.GITHUB_WORKSPACE;
    else process.env.GITHUB_WORKSPACE = saved;
    process.exitCode = 0;
  });

  it("prints only the SARIF log (exit 1 on errors), which the schema and Microsoft's validator accept", async () => {
    const repo = await mkdtemp(join(tmpdir(), "plumb-sarif-"));
    await mkdir(join(repo, "deploy"), { recursive: true });
    await writeFile(
      join(repo, "deploy", "a.yaml"),
      "apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  source: internal_container\n  sourc_revision_config: {image_uri: x}\n",
    );
    await writeFile(join(repo, "deploy", "empty.yaml"), "");
    process.env.GITHUB_WORKSPACE = repo;
    let out = "";
    await validateCommand({ write: (t: string) => (out += t) }).parseAsync(
      [join(repo, "deploy"), "--output", "sarif"],
      { from: "user" },
    );
    expect(process.exitCode).toBe(1);
    const log = JSON.parse(out);
    expect(validateSchema(log), JSON.stringify(validateSchema.errors)).toBe(true);
    const results = log.runs[0].results as Array<{ ruleId: string; locations: unknown[] }>;
    expect(results.map((r) => r.ruleId)).toContain("unknown-field");
    expect(JSON.stringify(results)).toContain('"uri":"deploy/a.yaml"');
    const file = join(repo, "plumb.sarif");
    await writeFile(file, out);
    expect(await multitoolErrors(file)).toEqual([]);
  }, 90_000);
});

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { settingsOf } from "../../src/cli/environments.js";
import { loadManifests } from "../../src/manifest/load.js";
import type { LoadedEnvironment } from "../../src/manifest/types.js";

// An Environment's api_key that an HTTP header cannot carry (a line break inside it, a control or a
// non-ASCII character) is refused naming the Environment's setting and where it is read from, as
// its tenant_id is (docs/environments.md "kind: Environment"): the client's own check said "the API
// key from --api-key-file PATH" or "from PLUMB_API_KEY", neither of which the run was given.

let root: string;
let environments: Map<string, LoadedEnvironment>;

const doc = (name: string, key: string) =>
  `apiVersion: plumb/v1\nkind: Environment\nmetadata:\n  name: ${name}\nspec:\n  api_url: https://api.example.com\n  api_key: ${key}\n`;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-env-unsendable-"));
  await writeFile(join(root, "key"), "first-half\nsecond-half\n");
  await writeFile(join(root, "file.yaml"), doc("file", "{file: key}"));
  await writeFile(join(root, "variable.yaml"), doc("variable", "{env: VARIABLE_KEY}"));
  const tree = await loadManifests(root, {});
  environments = new Map((tree.environments ?? []).map((e) => [e.manifest.metadata.name, e]));
});
afterAll(async () => rm(root, { recursive: true, force: true }));

const refusal = (name: string, env: NodeJS.ProcessEnv) => {
  try {
    settingsOf(environments.get(name)!, root, env);
  } catch (error) {
    return error as { code: string; message: string };
  }
  throw new Error("expected a refusal");
};

describe("an Environment's api_key a header cannot carry", () => {
  it("from a file: names the Environment's spec.api_key and its file, not --api-key-file", () => {
    const error = refusal("file", {});
    expect(error.code).toBe("api-config");
    expect(error.message).toContain("environment file's spec.api_key (file key, file.yaml:7)");
    expect(error.message).not.toContain("--api-key-file");
    expect(error.message).not.toContain("half");
  });

  it("from a variable: names the variable and the file:line, not PLUMB_API_KEY", () => {
    const error = refusal("variable", { VARIABLE_KEY: "abc\u0001def" });
    expect(error.code).toBe("api-config");
    expect(error.message).toContain("environment variable's spec.api_key ($VARIABLE_KEY, variable.yaml:7)");
    expect(error.message).not.toContain("PLUMB_API_KEY");
  });
});

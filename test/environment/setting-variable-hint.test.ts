import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { settingsOf } from "../../src/cli/environments.js";
import { loadManifests } from "../../src/manifest/load.js";
import type { LoadedEnvironment } from "../../src/manifest/types.js";

// An Environment's setting whose variable is not set names a set variable of a close name
// (docs/environments.md "kind: Environment"), never one the same Environment reads for another
// field: with PROD_API_KEY unset, "did you mean PROD_API_URL?" pointed the key at the URL's variable.

let root: string;
let prod: LoadedEnvironment;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-env-hint-"));
  await writeFile(
    join(root, "prod.yaml"),
    "apiVersion: plumb/v1\nkind: Environment\nmetadata:\n  name: prod\nspec:\n  api_url: {env: PROD_API_URL}\n  api_key: {env: PROD_API_KEY}\n",
  );
  prod = (await loadManifests(root, {})).environments![0]!;
});
afterAll(async () => rm(root, { recursive: true, force: true }));

const messageOf = (env: NodeJS.ProcessEnv): string => {
  try {
    settingsOf(prod, root, env);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected a refusal");
};

describe("the variable a missing setting may have meant", () => {
  it("is not the one the Environment's api_url reads", () => {
    const message = messageOf({ PROD_API_URL: "https://api.example.com" });
    expect(message).toContain("reads PROD_API_KEY, which is not set; export it");
    expect(message).not.toContain("did you mean");
  });

  it("is still a set variable of a close name, by name only", () => {
    const message = messageOf({ PROD_API_URL: "https://api.example.com", PROD_API_KY: "secret-value-1234" });
    expect(message).toContain('(did you mean "PROD_API_KY"?)');
    expect(message).not.toContain("secret-value-1234");
  });
});
